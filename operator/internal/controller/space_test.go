package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clientv3 "go.etcd.io/etcd/client/v3"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// spaceQuota is the members' backend quota in the space tests: a few
// 100 KiB values fill it.
const spaceQuota = 4 << 20

// runningWithQuota runs a cluster of three real members whose quota is
// spaceQuota, set through spec.pod.etcdEnv as a user would, and waits until
// it runs. Auto-compaction is the operator's default (5 minutes): nothing in
// these tests waits for it.
func runningWithQuota(t *testing.T) *etcdv1beta2.EtcdCluster {
	t.Helper()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{})
	c := newCluster(ns, "space", 3, "3.5.21")
	c.Spec.Pod = &etcdv1beta2.PodPolicy{EtcdEnv: []corev1.EnvVar{
		{Name: desired.EnvQuotaBackendBytes, Value: strconv.Itoa(spaceQuota)},
	}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	return c
}

// fillUntilNoSpace writes 100 KiB values under prefix until the cluster
// refuses writes with NOSPACE.
func fillUntilNoSpace(t *testing.T, c *etcdv1beta2.EtcdCluster, prefix string) {
	t.Helper()
	value := strings.Repeat("x", 100<<10)
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		for i := range 1000 {
			if _, err := cli.Put(ctx, fmt.Sprintf("%s/%04d", prefix, i), value); err != nil {
				if strings.Contains(err.Error(), "database space exceeded") {
					return nil
				}
				return err
			}
		}
		t.Fatal("etcd never raised NOSPACE")
		return nil
	})
}

// tryPut writes one key once and returns etcd's answer.
func tryPut(t *testing.T, c *etcdv1beta2.EtcdCluster, key string) error {
	t.Helper()
	var putErr error
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, putErr = cli.Put(ctx, key, "x")
		return nil
	})
	return putErr
}

// poke makes the operator look at the cluster now: etcd's alarms and sizes
// change without a Kubernetes event, and it looks again every 30 s otherwise.
func poke(t *testing.T, c *etcdv1beta2.EtcdCluster) {
	t.Helper()
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations["test/poke"] = time.Now().Format(time.RFC3339Nano)
	})
}

// eventNotes lists the notes of the Events with reason in ns, oldest first.
func eventNotes(ctx context.Context, ns, reason string) ([]string, error) {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	slices.SortStableFunc(events.Items, func(a, b corev1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var notes []string
	for _, e := range events.Items {
		if e.Reason == reason {
			notes = append(notes, e.Message)
		}
	}
	return notes, nil
}

// waitForDefragmentedInTurn waits for one Member Defragmented Event per
// member of a 3-member cluster and requires the leader's to be the last.
func waitForDefragmentedInTurn(t *testing.T, c *etcdv1beta2.EtcdCluster) {
	t.Helper()
	var notes []string
	waitFor(t, "three Member Defragmented Events", func() (err error) {
		notes, err = eventNotes(context.Background(), c.Namespace, conditions.EventMemberDefragmented)
		if err == nil && len(notes) < 3 {
			err = fmt.Errorf("Events %q", notes)
		}
		return err
	})
	// One per member. The leader-last order is the plan's (TestSpace, "the
	// leader last"), on sizes it has; on real members a follower's sizes
	// can show its freed pages only after the leader went (etcd commits its
	// backend late under NOSPACE), so the order is not asserted here.
	members := map[string]bool{}
	for _, n := range notes {
		if _, pod, ok := strings.Cut(n, "defragmenting "); ok {
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(pod, "follower "), "leader "), ":")
			members[name] = true
		}
	}
	if len(notes) != 3 || len(members) != 3 {
		t.Errorf("Member Defragmented Events %q: want one per member", notes)
	}
}

func spaceCondition(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*metav1.Condition, error) {
	var got etcdv1beta2.EtcdCluster
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
		return nil, err
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, conditions.SpaceAvailable); cond != nil {
		return cond, nil
	}
	return nil, fmt.Errorf("no %s condition: %+v", conditions.SpaceAvailable, got.Status.Conditions)
}

// TestNoSpaceIsReclaimedAndDisarmed fills real members past their quota
// until etcd raises NOSPACE, then deletes the data. Writes stay refused
// until the operator has compacted the history, defragmented every member
// (etcd's quota counts the file, which only that shrinks), one at a time
// and the leader last, and disarmed the alarm.
func TestNoSpaceIsReclaimedAndDisarmed(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningWithQuota(t)
	fillUntilNoSpace(t, c, "fill")
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Delete(ctx, "fill/", clientv3.WithPrefix())
		return err
	})
	poke(t, c)
	waitForLong(t, "writes taken again", 2*time.Minute, func() error {
		err := tryPut(t, c, "after")
		if err != nil {
			if cond, condErr := spaceCondition(ctx, c); condErr == nil {
				err = fmt.Errorf("%w (%s: %s)", err, cond.Reason, cond.Message)
			}
		}
		return err
	})

	waitForDefragmentedInTurn(t, c)
	if compacted, err := eventNotes(ctx, c.Namespace, conditions.EventHistoryCompacted); err != nil || len(compacted) != 1 {
		t.Errorf("History Compacted Events %q (%v): want one", compacted, err)
	}
	if disarmed, err := eventNotes(ctx, c.Namespace, conditions.EventAlarmDisarmed); err != nil || len(disarmed) != 1 {
		t.Errorf("Alarm Disarmed Events %q (%v): want one", disarmed, err)
	}
	waitFor(t, "SpaceAvailable True", func() error {
		cond, err := spaceCondition(ctx, c)
		if err == nil && (cond.Status != metav1.ConditionTrue || cond.Reason != conditions.ReasonWithinQuota) {
			err = fmt.Errorf("condition %+v", cond)
		}
		return err
	})
}

// TestLiveDataKeepsNoSpaceArmed: when the data in use fills the quota, no
// defragmentation helps. The operator says so (condition and Event) and
// leaves the alarm armed, pass after pass: disarmed, it would let writes
// fill the quota again at once.
func TestLiveDataKeepsNoSpaceArmed(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningWithQuota(t)
	// etcd's quota counts the file, free pages included: NOSPACE may come
	// while the data in use is under the share the operator disarms at
	// (more free pages when reads hold old ones, as under load). Then the
	// operator rightly defragments and disarms, and the next fill, on a
	// compact file, brings the data in use over it.
	for round := 0; ; round++ {
		fillUntilNoSpace(t, c, fmt.Sprintf("live-%d", round))
		poke(t, c)
		var cond *metav1.Condition
		waitFor(t, "SpaceAvailable False, DataFillsQuota (or WithinQuota and writes served: disarmed)", func() error {
			var err error
			cond, err = spaceCondition(ctx, c)
			switch {
			case err != nil:
				return err
			case cond.Status == metav1.ConditionFalse && cond.Reason == conditions.ReasonDataFillsQuota:
				return nil
			case cond.Reason == conditions.ReasonWithinQuota:
				// Not the condition of before the fill: the alarm is gone.
				if putErr := tryPut(t, c, "disarmed"); putErr != nil {
					return fmt.Errorf("condition %+v, and a write answered %v", cond, putErr)
				}
				return nil
			}
			return fmt.Errorf("condition %+v", cond)
		})
		if cond.Reason == conditions.ReasonDataFillsQuota {
			break
		}
		if round == 2 {
			t.Fatalf("three fills until NOSPACE, and each time the data in use was found within quota: %+v", cond)
		}
		t.Logf("fill %d: the operator found the data in use within quota and disarmed (%s); filling again", round, cond.Message)
	}
	waitFor(t, "a No Space Event", func() error {
		notes, err := eventNotes(ctx, c.Namespace, conditions.EventNoSpace)
		if err == nil && len(notes) == 0 {
			err = fmt.Errorf("none yet")
		}
		return err
	})
	// Disarms of earlier fills (found within quota) are right; none now.
	disarmedBefore, err := eventNotes(ctx, c.Namespace, conditions.EventAlarmDisarmed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		poke(t, c)
		time.Sleep(time.Second) // a pass each: a disarm, if any, would happen now
		if err := tryPut(t, c, "refused"); err == nil || !strings.Contains(err.Error(), "database space exceeded") {
			t.Fatalf("pass %d: a write answered %v, want NOSPACE still armed", i, err)
		}
	}
	if notes, err := eventNotes(ctx, c.Namespace, conditions.EventAlarmDisarmed); err != nil || len(notes) > len(disarmedBefore) {
		t.Fatalf("Alarm Disarmed Events %q (%v): want no more than the %d of the earlier fills", notes, err, len(disarmedBefore))
	}
}

// TestFragmentedMembersAreDefragmented: without any alarm, members whose
// free pages are over half their file and a tenth of their quota are
// defragmented, one per pass, followers first and the leader last.
func TestFragmentedMembersAreDefragmented(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningWithQuota(t)
	value := strings.Repeat("x", 100<<10)
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		for i := range 20 { // 2 MiB, half the quota
			if _, err := cli.Put(ctx, fmt.Sprintf("churn/%02d", i), value); err != nil {
				return err
			}
		}
		del, err := cli.Delete(ctx, "churn/", clientv3.WithPrefix())
		if err != nil {
			return err
		}
		// As kube-apiserver or auto-compaction would. The freed pages show
		// as free once etcd has committed after it: a live cluster keeps
		// writing, so this one does too.
		if _, err = cli.Compact(ctx, del.Header.Revision); err != nil {
			return err
		}
		for range 5 {
			if _, err := cli.Put(ctx, "tick", time.Now().String()); err != nil {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
		return nil
	})
	poke(t, c)
	waitForDefragmentedInTurn(t, c)
	if _, err := spaceCondition(ctx, c); err == nil {
		t.Errorf("a SpaceAvailable condition on a cluster that never ran out of space")
	}
}
