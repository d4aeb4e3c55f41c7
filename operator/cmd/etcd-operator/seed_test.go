package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSeedImage(t *testing.T) {
	o, _, err := parseFlags([]string{"--namespace=a", "--seed-image=registry.local/etcd-operator:v1"})
	if err != nil || o.seedImage != "registry.local/etcd-operator:v1" {
		t.Fatalf("--seed-image parsed as %q (%v)", o.seedImage, err)
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "sidecar", Image: "proxy"}, {Name: "etcd-operator", Image: "etcdproof/etcd-operator:dev"}}}}
	if got := imageOf(pod); got != "etcdproof/etcd-operator:dev" {
		t.Errorf("imageOf = %q, want the etcd-operator container's", got)
	}
	pod.Spec.Containers[1].Name = "operator"
	if got := imageOf(pod); got != "proxy" {
		t.Errorf("imageOf = %q, want the first container's", got)
	}
	if code := runSeed([]string{"--from=http://x:2379"}); code != 2 {
		t.Errorf("seed with missing flags exits %d, want 2", code)
	}
}
