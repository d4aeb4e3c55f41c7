package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// runningLearner adds learner name whose etcd has run for d, and says what
// the members know of it.
func runningLearner(o *Observed, name string, d time.Duration, started, healthy bool) {
	addLearner(o, name, o.Version)
	o.Pods[len(o.Pods)-1].RunningSince = o.Now.Add(-d)
	o.Members[len(o.Members)-1].Started = started
	o.Members[len(o.Members)-1].Healthy = healthy
}

func TestLearnersThatAreNotPromotedAreDeadAfterTheDeadline(t *testing.T) {
	const deadline = DefaultLearnerDeadline
	healthy := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { o.LearnerDeadline = deadline })
	// A lost voter (c) was removed, and learner d added in its place.
	replacing := with(healthy, func(o *Observed) {
		dropPod(o, "c")
		o.Members = o.Members[:2]
	})
	under, over := deadline-time.Second, deadline+time.Second
	tests := []struct {
		name string
		in   Observed
		want Action // only the fields set here are compared
	}{
		{"a learner that never reached the others, under the deadline: wait",
			with(replacing, func(o *Observed) { runningLearner(o, "d", under, false, false) }),
			Action{Kind: Wait, Reason: conditions.ReasonScalingUp}},
		{"a learner that never reached the others, over the deadline: removed, so the lost voter can be replaced",
			with(replacing, func(o *Observed) { runningLearner(o, "d", over, false, false) }),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 3, NotRunning: "yes", Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"a learner that knows no leader, over the deadline: removed",
			with(replacing, func(o *Observed) { runningLearner(o, "d", over, true, false) }),
			Action{Kind: RemoveDeadMember, Member: "d", Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"a learner etcd refuses to promote (not caught up), under the deadline: promotion is tried",
			with(replacing, func(o *Observed) { runningLearner(o, "d", under, true, true) }),
			Action{Kind: PromoteLearner, Member: "d"}},
		{"a learner etcd refuses to promote, over the deadline: removed",
			with(replacing, func(o *Observed) { runningLearner(o, "d", over, true, true) }),
			Action{Kind: RemoveDeadMember, Member: "d", Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"the deadline grows with the data: 1 GiB adds a minute",
			with(replacing, func(o *Observed) {
				o.Members[0].DBSize = 1 << 30
				runningLearner(o, "d", deadline+time.Minute-time.Second, true, true)
			}),
			Action{Kind: PromoteLearner, Member: "d"}},
		{"and past that, removed",
			with(replacing, func(o *Observed) {
				o.Members[0].DBSize = 1 << 30
				runningLearner(o, "d", deadline+time.Minute+time.Second, true, true)
			}),
			Action{Kind: RemoveDeadMember, Member: "d", Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"a scale-up learner over the deadline: removed (scale adds another)",
			with(healthy, func(o *Observed) {
				o.Size = 4
				runningLearner(o, "d", over, false, false)
			}),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 4, Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"an upgrade's learner over the deadline: removed as surplus",
			with(healthy, func(o *Observed) {
				o.Version = "3.5.22"
				runningLearner(o, "d", over, false, false)
			}),
			Action{Kind: RemoveMember, Member: "d", MemberID: 4, Stuck: conditions.ReasonLearnerNotCaughtUp}},
		{"a learner whose container start is not reported has no learner clock",
			with(replacing, func(o *Observed) {
				runningLearner(o, "d", over, false, false)
				o.Pods[len(o.Pods)-1].RunningSince = time.Time{}
			}),
			Action{Kind: Wait}},
		{"a voter that runs without answering is not judged by the learner deadline",
			with(healthy, func(o *Observed) {
				o.Pods[2].RunningSince = now.Add(-time.Hour)
				o.Members[2].Healthy = false
			}),
			Action{Kind: Wait, Reason: conditions.ReasonMembershipUnknown}},
		{"learner deadline 0 switches the rule off",
			with(replacing, func(o *Observed) {
				o.LearnerDeadline = 0
				runningLearner(o, "d", time.Hour, false, false)
			}),
			Action{Kind: Wait, Reason: conditions.ReasonScalingUp}},
		{"quorum: a stuck learner is not removed while the voters have no quorum",
			with(replacing, func(o *Observed) {
				o.Members[1].Healthy = false
				runningLearner(o, "d", over, false, false)
			}),
			Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLearnerDeadlineIsInTheNextLook(t *testing.T) {
	o := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.LearnerDeadline = DefaultLearnerDeadline
		o.Size = 4
		runningLearner(o, "d", DefaultLearnerDeadline-30*time.Second, true, true)
	})
	if left, ok := untilDeadline(o); !ok || left != 30*time.Second+time.Millisecond {
		t.Fatalf("untilDeadline() = %s, %v; want 30.001s", left, ok)
	}
}

func TestWhyALearnerIsDead(t *testing.T) {
	for _, tt := range []struct {
		started, healthy bool
		want             string
	}{
		{false, false, "it never reached the other members"},
		{true, false, "knows no leader"},
		{true, true, "etcd refuses to promote it: it has not caught up"},
	} {
		o := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
			o.LearnerDeadline = time.Minute
			runningLearner(o, "d", 3*time.Minute, tt.started, tt.healthy)
		})
		d := o.Members[3]
		why := WhyDead(o, d)
		if !strings.HasPrefix(why, "learner d has run since 2026-01-01T11:57:00Z without being promoted, longer than the 1m0s learner deadline: ") ||
			!strings.Contains(why, tt.want) {
			t.Errorf("WhyDead() = %q, want it to say %q", why, tt.want)
		}
		if got := DeadReason(o, d); got != conditions.ReasonLearnerNotCaughtUp {
			t.Errorf("DeadReason() = %q", got)
		}
	}
}
