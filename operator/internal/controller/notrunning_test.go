package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// setPodStatus makes pod p report what a kubelet (or the node controller)
// would: Ready and ContainersReady as given, changed at since, and the etcd
// container in state.
func setPodStatus(t *testing.T, p *corev1.Pod, ready, containersReady corev1.ConditionStatus, since time.Time, state corev1.ContainerState) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(since)
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.ContainersReady, Status: containersReady, LastTransitionTime: at},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: at},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "etcd", Image: p.Spec.Containers[0].Image, State: state}}
	if err := k8s.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// TestMemberThatDoesNotRunIsReplaced: a member whose pod does not run for
// longer than the deadline is removed from membership and replaced by a new
// learner, with a Warning Event that says which member and why.
func TestMemberThatDoesNotRunIsReplaced(t *testing.T) {
	needAPIServer(t)
	for _, tt := range []struct {
		name  string
		stall func(t *testing.T, p *corev1.Pod)
	}{
		{"crash-loop", func(t *testing.T, p *corev1.Pod) {
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionFalse, time.Now().Add(-time.Minute),
				corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}})
		}},
		{"node-lost", func(t *testing.T, p *corev1.Pod) {
			// The node controller's mark: Ready False, the rest as the kubelet left it.
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionTrue, time.Now().Add(-time.Minute),
				corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
			// No kubelet confirms the deletion: the finalizer plays the lost node.
			ctx := context.Background()
			before := p.DeepCopy()
			p.Finalizers = append(p.Finalizers, kubeletFinalizer)
			if err := k8s.Patch(ctx, p, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				var left corev1.Pod
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), &left); err == nil {
					before := left.DeepCopy()
					left.Finalizers = slices.DeleteFunc(left.Finalizers, func(f string) bool { return f == kubeletFinalizer })
					_ = k8s.Patch(ctx, &left, client.MergeFrom(before))
				}
			})
			if err := k8s.Delete(ctx, p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, pods, members := runningClusterWith(t, &controller.Reconciler{NotRunningDeadline: 2 * time.Second}, tt.name, 3)
			victim := pods[2]
			stopMember(members[victim.Name])
			tt.stall(t, &victim)

			admin, err := etcdadmin.Dial(clientURLs(members, pods[0], pods[1]), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = admin.Close() }()
			waitFor(t, "the member that does not run is removed and a learner added in its place", func() error {
				ms, err := admin.Members(ctx)
				if err != nil {
					return err
				}
				learners := 0
				for _, m := range ms {
					if m.Name == victim.Name {
						return fmt.Errorf("member %s still in membership", victim.Name)
					}
					if m.IsLearner {
						learners++
					}
				}
				if len(ms) != 3 || learners != 1 {
					return fmt.Errorf("membership %+v: want 2 voters and 1 learner", ms)
				}
				return nil
			})
			if !eventsRecorded(t) {
				return
			}
			waitFor(t, "a Warning Event names the member", func() error {
				var events corev1.EventList
				if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
					return err
				}
				for _, e := range events.Items {
					if e.Reason == conditions.EventMemberNotRunning && e.Type == corev1.EventTypeWarning {
						if !strings.Contains(e.Message, victim.Name) {
							return fmt.Errorf("event %q does not name %s", e.Message, victim.Name)
						}
						return nil
					}
				}
				return fmt.Errorf("no %q event", conditions.EventMemberNotRunning)
			})
		})
	}
}
