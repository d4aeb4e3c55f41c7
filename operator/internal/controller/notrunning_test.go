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

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
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

// podReadyToStartContainers is the kubelet's pod condition (1.29+; named
// PodHasNetwork before) that turns True once the pod's sandbox, volumes and
// network are ready.
const podReadyToStartContainers corev1.PodConditionType = "PodReadyToStartContainers"

// holdDeletion keeps pod p once deleted, as a kubelet that never confirms
// the deletion does, until the test ends.
func holdDeletion(t *testing.T, p *corev1.Pod) {
	t.Helper()
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
}

// TestMemberThatDoesNotRunIsReplaced: a member whose pod does not run for
// longer than the deadline is removed from membership and replaced by a new
// learner, with a Warning Event that says which member and why. That
// includes a pod stuck terminating on a working node past its grace period,
// and one whose containers never get created.
func TestMemberThatDoesNotRunIsReplaced(t *testing.T) {
	needAPIServer(t)
	for _, tt := range []struct {
		name  string
		event string // the Warning Event's reason, which names the member
		stall func(t *testing.T, p *corev1.Pod)
	}{
		{"crash-loop", conditions.EventMemberNotRunning, func(t *testing.T, p *corev1.Pod) {
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionFalse, time.Now().Add(-time.Minute),
				corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}})
		}},
		{"node-lost-not-evicted", conditions.EventMemberNotRunning, func(t *testing.T, p *corev1.Pod) {
			// The node controller's mark, and no eviction: member pods
			// tolerate a lost node for ever, so the operator must see to it.
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionTrue, time.Now().Add(-time.Minute),
				corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
		}},
		{"node-lost", conditions.EventMemberNotRunning, func(t *testing.T, p *corev1.Pod) {
			// The node controller's mark: Ready False, the rest as the kubelet left it.
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionTrue, time.Now().Add(-time.Minute),
				corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
			// No kubelet confirms the deletion: the finalizer plays the lost node.
			holdDeletion(t, p)
			if err := k8s.Delete(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"stuck-terminating", conditions.ReasonPodStuckTerminating, func(t *testing.T, p *corev1.Pod) {
			// A working node's kubelet stopped etcd (containers not ready,
			// Ready False with them: no lost-node mark), but the pod stays:
			// a finalizer nobody removes, a volume that does not unmount.
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionFalse, time.Now(),
				corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}})
			holdDeletion(t, p)
			if err := k8s.Delete(context.Background(), p, client.GracePeriodSeconds(1)); err != nil {
				t.Fatal(err)
			}
		}},
		{"stuck-creating", conditions.ReasonPodStuckCreating, func(t *testing.T, p *corev1.Pod) {
			// The node lost the pod's sandbox (a reboot) and cannot make
			// another: volumes that do not mount, a network plugin that fails.
			setPodStatus(t, p, corev1.ConditionFalse, corev1.ConditionFalse, time.Now(),
				corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}})
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type: podReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()})
			if err := k8s.Status().Update(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, pods, members := runningClusterWith(t, &controller.Reconciler{
				NotRunningDeadline: 2 * time.Second, CreatingDeadline: 2 * time.Second}, tt.name, 3)
			victim := pods[2]
			stopMember(members[victim.Name])
			tt.stall(t, &victim)

			waitForLearnerInPlaceOf(t, "the member that does not run is removed and a learner added in its place",
				clientURLs(members, pods[0], pods[1]), victim.Name)
			if !eventsRecorded(t) {
				return
			}
			waitFor(t, "a Warning Event names the member", func() error {
				var events corev1.EventList
				if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
					return err
				}
				for _, e := range events.Items {
					if e.Reason == tt.event && e.Type == corev1.EventTypeWarning {
						if !strings.Contains(e.Message, victim.Name) {
							return fmt.Errorf("event %q does not name %s", e.Message, victim.Name)
						}
						return nil
					}
				}
				return fmt.Errorf("no %q event", tt.event)
			})
		})
	}
}

// TestMemberOnALostNodeThatAnswersIsKept: a member whose pod the node
// controller marked (its kubelet cut off from the API server) is still
// asked for its status, and while it answers it is a member like any other,
// however long ago its node was lost. Only its kubelet is out of reach:
// replacing it would throw away a healthy member, two at once when two
// kubelets are cut off.
func TestMemberOnALostNodeThatAnswersIsKept(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	network := &fakeNetwork{routes: map[string]string{}}
	c, pods, members := runningClusterOn(t, &controller.Reconciler{NotRunningDeadline: 2 * time.Second}, network, "lost-node", 3)
	victim := pods[2]
	marked := time.Now()
	setPodStatus(t, &victim, corev1.ConditionFalse, corev1.ConditionTrue, marked.Add(-time.Minute),
		corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&victim), &victim); err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + victim.Status.PodIP + ":2379"
	waitFor(t, "the operator asks the member on the lost node", func() error {
		if !network.dialedSince(endpoint, marked) {
			return fmt.Errorf("%s not asked since its node was lost", endpoint)
		}
		return nil
	})
	// A pass that asked it saw it answer; the pass after writes status.
	waitFor(t, "status lists the member on the lost node as ready", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		if !slices.Contains(got.Status.Members.Ready, victim.Name) {
			return fmt.Errorf("ready members %v", got.Status.Members.Ready)
		}
		return nil
	})
	admin, err := etcdadmin.Dial(clientURLs(members, pods...), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	ms, err := admin.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ms, func(m etcdadmin.Member) bool { return m.Name == victim.Name }) {
		t.Fatalf("member %s was removed although it answers: membership %+v", victim.Name, ms)
	}
}

// waitForLearnerInPlaceOf waits until the members at endpoints list victim
// no more and a learner beside two voters: a lost member's replacement
// begun.
func waitForLearnerInPlaceOf(t *testing.T, what string, endpoints []string, victim string) {
	t.Helper()
	admin, err := etcdadmin.Dial(endpoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	waitFor(t, what, func() error {
		ms, err := admin.Members(context.Background())
		if err != nil {
			return err
		}
		learners := 0
		for _, m := range ms {
			if m.Name == victim {
				return fmt.Errorf("member %s still in membership", victim)
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
}
