package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func TestBackoff(t *testing.T) {
	for count, want := range map[int]time.Duration{
		0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 7: 64 * time.Second,
		8: MaxBackoff, 30: MaxBackoff,
	} {
		if got := Backoff(count); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", count, got, want)
		}
	}
}

func TestFailedChangesBackOff(t *testing.T) {
	scaleUp := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { o.Size = 4 })
	failed := func(count int, ago time.Duration) func(*Observed) {
		return func(o *Observed) {
			o.Failures = []Failure{{Kind: AddMember, Count: count, Last: now.Add(-ago), Error: "creating pod d: exceeded quota"}}
		}
	}
	tests := []struct {
		name string
		in   Observed
		want Action
	}{
		{"no failure: add", scaleUp, Action{Kind: AddMember}},
		{"failed once a second ago: add again", with(scaleUp, failed(1, time.Second)), Action{Kind: AddMember}},
		{"failed three times, the last a second ago: wait the 3 s left of its 4 s",
			with(scaleUp, failed(3, time.Second)), Action{Kind: Wait, Reason: conditions.ReasonScalingUp, RequeueAfter: 3 * time.Second}},
		{"failed three times, the last 4 s ago: add again", with(scaleUp, failed(3, 4*time.Second)), Action{Kind: AddMember}},
		{"another change's failure holds nothing",
			with(scaleUp, func(o *Observed) {
				o.Failures = []Failure{{Kind: RemoveDeadMember, Member: "x", Count: 5, Last: now}}
			}),
			Action{Kind: AddMember}},
		{"a member's removal is held by its own failures",
			with(scaleUp, func(o *Observed) {
				o.Size = 3
				dropPod(o, "c")
				o.Failures = []Failure{{Kind: RemoveDeadMember, Member: "c", Count: 2, Last: now}}
			}),
			Action{Kind: Wait, RequeueAfter: 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStalledCondition(t *testing.T) {
	last := now.Add(-time.Second)
	for _, tt := range []struct {
		name     string
		failures []Failure
		stalled  bool
		reason   string
		message  string
	}{
		{"nothing failed", nil, false, conditions.ReasonChangesSucceed, "went through"},
		{"one failure is retried at once, not told", []Failure{{Kind: AddMember, Count: 1, Last: last}}, false, conditions.ReasonChangesSucceed, ""},
		{"a refused pod is told at once",
			[]Failure{{Kind: AddMember, Count: 1, Last: last, Refused: true, Error: `pods "d" is forbidden: exceeded quota`}},
			true, conditions.ReasonMemberPodRefused,
			`the API server refuses the pod of a new member: pods "d" is forbidden: exceeded quota; no member is added (refused 1 time(s) in a row; next try at 2026-01-01T12:00:00Z (1s after the last))`},
		{"repeated failures back off",
			[]Failure{{Kind: PromoteLearner, Member: "d", Count: 1, Last: last}, {Kind: AddMember, Count: 3, Last: last, Error: "learner x removed"}},
			true, conditions.ReasonBackingOff,
			"adding a member failed 3 times in a row, last at 2026-01-01T11:59:59Z: learner x removed; next try at 2026-01-01T12:00:03Z (4s after the last)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := cluster("3.5.21", "a")
			o.Failures = tt.failures
			stalled, reason, message := StalledCondition(o)
			if stalled != tt.stalled || reason != tt.reason || !strings.Contains(message, tt.message) {
				t.Fatalf("StalledCondition() = %v, %q, %q; want %v, %q, %q", stalled, reason, message, tt.stalled, tt.reason, tt.message)
			}
		})
	}
}
