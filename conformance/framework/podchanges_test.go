package framework

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// pod builds a member pod state: phase, ready, the etcd container's
// restarts and the state it waits in.
func pod(node string, phase corev1.PodPhase, ready bool, restarts int32, waiting string) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	cs := corev1.ContainerStatus{Name: "etcd", RestartCount: restarts}
	if restarts > 0 {
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
	}
	if waiting != "" {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting, Message: "back-off 10s restarting failed container"}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	return p
}

func TestPodChangesNameEachStepOfAMemberPodsLife(t *testing.T) {
	deleting := pod("node-1", corev1.PodRunning, true, 0, "")
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &metav1.Time{}, ptr.To(int64(30))
	for _, tc := range []struct {
		name     string
		old, cur *corev1.Pod
		want     string
	}{
		{"created", nil, pod("", corev1.PodPending, false, 0, ""), "Created"},
		{"created bound", nil, pod("node-1", corev1.PodPending, false, 0, ""), "Created on node node-1"},
		{"scheduled", pod("", corev1.PodPending, false, 0, ""), pod("node-1", corev1.PodPending, false, 0, "ContainerCreating"), "Scheduled on node node-1"},
		{"running, then ready", pod("node-1", corev1.PodPending, false, 0, ""), pod("node-1", corev1.PodRunning, true, 0, ""), "Running; Ready"},
		{"OOMKilled and restarted", pod("node-1", corev1.PodRunning, true, 0, ""), pod("node-1", corev1.PodRunning, false, 1, "CrashLoopBackOff"),
			"!Restarted container etcd restarted (1 restarts): OOMKilled, exit code 137; !Unready"},
		{"crash loop", pod("node-1", corev1.PodRunning, false, 1, ""), pod("node-1", corev1.PodRunning, false, 1, "CrashLoopBackOff"),
			"!CrashLoopBackOff container etcd: back-off 10s restarting failed container"},
		{"the same state again", pod("node-1", corev1.PodRunning, true, 0, ""), pod("node-1", corev1.PodRunning, true, 0, ""), ""},
		{"deleted by the suite", pod("node-1", corev1.PodRunning, true, 0, ""), deleting, "Terminating grace period 30 s"},
		{"evicted", pod("node-1", corev1.PodRunning, true, 0, ""), func() *corev1.Pod {
			p := pod("node-1", corev1.PodFailed, false, 0, "")
			p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
			return p
		}(), "!Failed Evicted: The node was low on resource: memory.; !Unready"},
	} {
		var got []string
		for _, c := range podChanges(tc.old, tc.cur) {
			s := strings.TrimSpace(fmt.Sprintf("%s %s", c.Reason, c.Message))
			if c.Warning {
				s = "!" + s
			}
			got = append(got, s)
		}
		if strings.Join(got, "; ") != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, strings.Join(got, "; "), tc.want)
		}
	}
}
