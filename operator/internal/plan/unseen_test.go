package plan

import (
	"testing"
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func TestPodsNotSeenYetAreWaitedFor(t *testing.T) {
	healthy := cluster("3.5.21", "a", "b", "c")
	// Learner d was added and its pod created; the pod list does not show it.
	added := with(healthy, func(o *Observed) {
		o.Size = 4
		addLearner(o, "d", "3.5.21")
		dropPod(o, "d")
	})
	tests := []struct {
		name string
		in   Observed
		want Action // only the fields set here are compared
	}{
		{"a member whose pod the operator created a moment ago is not dead: wait for the cache",
			with(added, func(o *Observed) { o.Unseen = map[string]time.Time{"d": now.Add(-200 * time.Millisecond)} }),
			Action{Kind: Wait, Reason: conditions.ReasonPodNotSeenYet, RequeueAfter: PollInFlight}},
		{"the next look no later than the grace's end",
			with(added, func(o *Observed) {
				o.Unseen = map[string]time.Time{"d": now.Add(-PodCacheGrace + 300*time.Millisecond)}
			}),
			Action{Kind: Wait, Reason: conditions.ReasonPodNotSeenYet, RequeueAfter: 300 * time.Millisecond}},
		{"past the grace the pod counts as gone: its member is dead",
			with(added, func(o *Observed) { o.Unseen = map[string]time.Time{"d": now.Add(-PodCacheGrace - time.Second)} }),
			Action{Kind: RemoveDeadMember, Member: "d"}},
		{"a member whose pod nobody created lately is dead at once",
			added,
			Action{Kind: RemoveDeadMember, Member: "d"}},
		{"a bootstrap whose pods the cache does not show yet is not started again",
			Observed{Now: now, Size: 3, Version: "3.5.21", Repository: repo, Phase: etcdv1beta2.PhaseCreating,
				Unseen: map[string]time.Time{"a": now.Add(-time.Second), "b": now.Add(-time.Second), "c": now.Add(-time.Second)}},
			Action{Kind: Wait, Reason: conditions.ReasonPodNotSeenYet}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
	unseen := with(added, func(o *Observed) { o.Unseen = map[string]time.Time{"d": now.Add(-time.Second)} })
	if dead := Dead(unseen); len(dead) != 0 {
		t.Fatalf("Dead() = %+v while d's pod is not seen yet, want none", dead)
	}
}
