package framework

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestElectionTimeoutFromMemberPods(t *testing.T) {
	pod := func(command []string, args []string, env ...corev1.EnvVar) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Command: command, Args: args, Env: env}}}}
	}
	cases := []struct {
		name string
		pods []corev1.Pod
		want time.Duration
	}{
		{"none set: etcd's default", []corev1.Pod{pod([]string{"etcd"}, []string{"--name=a"})}, time.Second},
		{"separate argument", []corev1.Pod{pod(nil, []string{"--election-timeout", "2500"})}, 2500 * time.Millisecond},
		{"one shell string, as coreos writes it", []corev1.Pod{pod([]string{"/bin/sh", "-ec", "/usr/local/bin/etcd --data-dir=/var/etcd/data --election-timeout=3000 --name=a"}, nil)}, 3 * time.Second},
		{"environment", []corev1.Pod{pod([]string{"etcd"}, nil, corev1.EnvVar{Name: "ETCD_ELECTION_TIMEOUT", Value: "1500"})}, 1500 * time.Millisecond},
		{"the flag shadows the environment", []corev1.Pod{pod([]string{"etcd", "--election-timeout=1200"}, nil, corev1.EnvVar{Name: "ETCD_ELECTION_TIMEOUT", Value: "5000"})}, 1200 * time.Millisecond},
		{"the longest of the members", []corev1.Pod{pod(nil, []string{"--election-timeout=1000"}), pod(nil, []string{"--election-timeout=2000"})}, 2 * time.Second},
	}
	for _, tc := range cases {
		if got := electionTimeout(tc.pods); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
