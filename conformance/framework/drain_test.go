package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The drain evicts what `kubectl drain --ignore-daemonsets` evicts, and
// leaves the suite's own client pods alone.
func TestDrainable(t *testing.T) {
	yes := true
	owned := func(kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: "x", Controller: &yes}}
	}
	now := metav1.Now()
	tests := []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"member pod owned by its cluster", corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: owned("EtcdCluster")}}, true},
		{"operator pod of a ReplicaSet", corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: owned("ReplicaSet")}}, true},
		{"DaemonSet pod", corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: owned("DaemonSet")}}, false},
		{"mirror pod", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}}, false},
		{"traffic clients", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": trafficPodLabel}}}, false},
		{"already terminating", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, false},
		{"finished", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, false},
	}
	for _, tc := range tests {
		if got := drainable(tc.pod); got != tc.want {
			t.Errorf("%s: drainable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
