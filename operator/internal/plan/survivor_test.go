package plan

import (
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// lostMajority is a 3-member emptyDir cluster whose pods a and b are gone:
// c answers on its own, at raft index 42, with no leader, so membership as
// read through quorum is unknown.
func lostMajority() Observed {
	return with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		dropPod(o, "a")
		dropPod(o, "b")
		o.Local = []Local{{Pod: "c", MemberID: 3, RaftIndex: 42, Members: o.Members}}
		o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
		o.SeedImage = "etcdproof/etcd-operator:dev"
	})
}

// seeding is lostMajority once pod s, seeded from c, exists.
func seeding(f func(o *Observed)) Observed {
	return with(lostMajority(), func(o *Observed) {
		o.RecoverFromSurvivor = true
		o.Local = nil
		o.Pods = append(o.Pods, Pod{Name: "s", Version: "3.5.21", Created: now,
			Seed: &Seed{From: "c", RaftIndex: 42, Replaces: []string{"c"}}})
		f(o)
	})
}

func seedAnswers(o *Observed) {
	o.MembershipKnown, o.LeaderID = true, 9
	o.Members = []Member{{ID: 9, Name: "s", Started: true, Healthy: true}}
}

func TestRecoverFromSurvivor(t *testing.T) {
	optIn := func(o *Observed) { o.RecoverFromSurvivor = true }
	noImage := func(o *Observed) { o.RecoverFromSurvivor, o.SeedImage = true, "" }
	tests := []struct {
		name string
		in   Observed
		want Action
	}{
		{"not opted in: nothing is changed, and the condition says how to opt in",
			lostMajority(), Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"opted in: a new member is seeded from the survivor, replacing every pod left",
			with(lostMajority(), optIn),
			Action{Kind: SeedFromSurvivor, From: "c", RaftIndex: 42, Names: []string{"c"}, Version: "3.5.21",
				Reason: conditions.ReasonRecoveringFromSurvivor}},
		{"opted in, but the operator's image is unknown: nothing is changed",
			with(lostMajority(), noImage), Action{Kind: Wait, Reason: conditions.ReasonQuorumLost}},
		{"the survivor with the highest raft index is the source",
			with(cluster("3.5.21", "a", "b", "c", "d", "e"), func(o *Observed) {
				members := o.Members
				for _, n := range []string{"a", "b", "c"} {
					dropPod(o, n)
				}
				o.Local = []Local{{Pod: "d", RaftIndex: 40, Members: members}, {Pod: "e", RaftIndex: 50, Members: members}}
				o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
				o.RecoverFromSurvivor, o.SeedImage = true, "operator"
			}),
			Action{Kind: SeedFromSurvivor, From: "e", RaftIndex: 50, Names: []string{"d", "e"}}},
		{"the seed runs the survivor's version, which wrote the data",
			with(lostMajority(), func(o *Observed) { o.RecoverFromSurvivor = true; o.Version = "3.6.5" }),
			Action{Kind: SeedFromSurvivor, Version: "3.5.21"}},
		{"old servers answer membership without quorum: same decision",
			with(lostMajority(), func(o *Observed) {
				o.RecoverFromSurvivor = true
				o.MembershipKnown, o.Members = true, o.Local[0].Members
				o.Members[2].Healthy = false
				o.Members[0].Healthy, o.Members[1].Healthy = false, false
			}),
			Action{Kind: SeedFromSurvivor, From: "c"}},
		{"a majority left, without a leader for now: no recovery",
			with(lostMajority(), func(o *Observed) {
				o.RecoverFromSurvivor = true
				o.Pods = append(o.Pods, Pod{Name: "b", Version: "3.5.21"})
				o.Local = append(o.Local, Local{Pod: "b", RaftIndex: 41, Members: o.Local[0].Members})
			}),
			Action{Kind: Wait, Reason: conditions.ReasonMembershipUnknown}},
		{"a lost member whose pod is still there (its node may come back) is not lost",
			with(lostMajority(), func(o *Observed) {
				o.RecoverFromSurvivor = true
				o.Pods = append(o.Pods, Pod{Name: "b", Version: "3.5.21", NotRunning: "CrashLoopBackOff", NotRunningSince: created})
			}),
			Action{Kind: Wait, Reason: conditions.ReasonMembershipUnknown}},
		{"a survivor that sees a leader: quorum is not lost",
			with(lostMajority(), func(o *Observed) { o.RecoverFromSurvivor = true; o.Local[0].LeaderID = 1 }),
			Action{Kind: Wait, Reason: conditions.ReasonMembershipUnknown}},
		{"no survivor: Failed, opted in or not",
			with(lostMajority(), func(o *Observed) { o.RecoverFromSurvivor = true; o.Pods, o.Local = nil, nil }),
			Action{Kind: Fail}},
		{"with claims the members come back on their volumes instead",
			with(lostMajority(), func(o *Observed) {
				o.RecoverFromSurvivor, o.UsesPVC = true, true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
			}),
			Action{Kind: RecreatePod, Member: "a"}},
		{"seeded pod not answering yet: wait, leaving the old pods alone",
			seeding(func(*Observed) {}), Action{Kind: Wait, Reason: conditions.ReasonRecoveringFromSurvivor}},
		{"seeded member runs: the old pods are deleted",
			seeding(seedAnswers), Action{Kind: RetireOldMembers, Names: []string{"c"}, Reason: conditions.ReasonRecoveringFromSurvivor}},
		{"old pods terminating: wait for them",
			seeding(func(o *Observed) {
				seedAnswers(o)
				o.Pods[0].Terminating = true
			}),
			Action{Kind: Wait, Reason: conditions.ReasonRecoveringFromSurvivor}},
		{"seeded pod failed: deleted, to seed another",
			seeding(func(o *Observed) { o.Pods[1].Failed = true }),
			Action{Kind: DeleteOrphanPod, Member: "s"}},
		{"old pods gone: the seeded cluster grows back as usual",
			seeding(func(o *Observed) {
				seedAnswers(o)
				dropPod(o, "c")
			}),
			Action{Kind: AddMember, Reason: conditions.ReasonScalingUp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if !matches(got, tt.want) || (tt.want.From != "" && got.From != tt.want.From) ||
				(tt.want.RaftIndex != 0 && got.RaftIndex != tt.want.RaftIndex) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestQuorumLostMessages(t *testing.T) {
	got := Next(lostMajority(), Options{})
	for _, want := range []string{"a, b", "c survives at raft index 42", desired.AnnotationRecoverFromSurvivor + "=true"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q does not say %q", got.Message, want)
		}
	}
	got = Next(with(lostMajority(), func(o *Observed) { o.RecoverFromSurvivor = true }), Options{})
	if !strings.Contains(got.Message, "missing") {
		t.Errorf("message %q does not say that writes may be missing", got.Message)
	}
}
