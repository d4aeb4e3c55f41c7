package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A backup pod finished twice (the first status write seen late) must give
// the backup the same date both times: restores name it by that date.
func TestBackupDateIsWhenThePodEnded(t *testing.T) {
	finished := time.Date(2026, 12, 7, 21, 34, 51, 0, time.UTC)
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}},
	}}}
	for _, now := range []time.Time{finished.Add(300 * time.Millisecond), finished.Add(1200 * time.Millisecond)} {
		if got := endedAt(pod, now); !got.Equal(finished) {
			t.Errorf("finished at %s, looked at %s: dated %s", finished, now, got)
		}
	}
	now := finished.Add(time.Second)
	if got := endedAt(&corev1.Pod{}, now); !got.Equal(now) {
		t.Errorf("no kubelet status, looked at %s: dated %s, want now", now, got)
	}
}
