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

// runWithoutJoining plays the kubelet of pods that are not in known: each
// runs (phase Running, its etcd container started, not ready) but no etcd
// member runs for it, so its member never reaches the others: a network
// policy that drops peer traffic, a peer certificate the others refuse.
func runWithoutJoining(t *testing.T, ns string, known []corev1.Pod) {
	everyPodUntilTestEnds(t, ns, func(ctx context.Context, p *corev1.Pod) {
		if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil ||
			slices.ContainsFunc(known, func(k corev1.Pod) bool { return k.Name == p.Name }) {
			return
		}
		started := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: started},
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "etcd", Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}
		_ = k8s.Status().Update(ctx, p)
	})
}

// TestLearnerThatNeverJoinsIsReplaced: a voter is lost and the learner
// added in its place runs but never reaches the others. Past the learner
// deadline it counts as dead: it is removed (a Warning Event and the
// Recovering condition say why) and another learner is added, so the lost
// voter's replacement is not blocked for good; repeated, the add backs off
// (Stalled).
func TestLearnerThatNeverJoinsIsReplaced(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c, pods, members := runningClusterWith(t, &controller.Reconciler{LearnerDeadline: 3 * time.Second}, "learner", 3)
	log := watchConditions(t, c)
	runWithoutJoining(t, c.Namespace, pods)

	victim := pods[2]
	stopMember(members[victim.Name])
	if err := k8s.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	admin, err := etcdadmin.Dial(clientURLs(members, pods[0], pods[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	learners := func() ([]string, error) {
		ms, err := admin.Members(ctx)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, m := range ms {
			if m.IsLearner {
				names = append(names, peerName(m))
			}
		}
		return names, nil
	}
	var first string
	waitFor(t, "the lost voter removed and a learner added in its place", func() error {
		names, err := learners()
		if err != nil {
			return err
		}
		if len(names) != 1 {
			return fmt.Errorf("learners %v", names)
		}
		first = names[0]
		return nil
	})
	waitFor(t, "the learner that never joins removed and another added", func() error {
		names, err := learners()
		if err != nil {
			return err
		}
		if len(names) != 1 || names[0] == first {
			return fmt.Errorf("learners %v: want one other than %s", names, first)
		}
		return nil
	})
	log.wantCondition(t, conditions.Recovering, conditions.ReasonLearnerNotCaughtUp, first)
	log.wantCondition(t, conditions.Stalled, conditions.ReasonBackingOff, "adding a member")
	if !eventsRecorded(t) {
		return
	}
	waitFor(t, "a Warning Event names the learner", func() error {
		notes, err := eventNotes(ctx, c.Namespace, conditions.ReasonLearnerNotCaughtUp)
		if err != nil {
			return err
		}
		for _, n := range notes {
			if strings.Contains(n, first) {
				return nil
			}
		}
		return fmt.Errorf("no %q event names %s (have %q)", conditions.ReasonLearnerNotCaughtUp, first, notes)
	})
}
