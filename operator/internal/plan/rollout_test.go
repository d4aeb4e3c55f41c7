package plan

import (
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// runs makes member pod i run version.
func runs(o *Observed, i int, version string) {
	o.Pods[i].Version, o.Pods[i].Image = version, repo+":v"+version
}

func withClaims(o *Observed) {
	o.UsesPVC = true
	for _, p := range o.Pods {
		o.PVCs[p.Name] = true
	}
}

// aborted: spec.version went back from 3.6.16 to 3.5.21 after b and c were
// upgraded; a still runs 3.5.21, which status reports.
func aborted(pvc bool) Observed {
	return with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.ReportedVersion = "3.5.21"
		runs(o, 1, "3.6.16")
		runs(o, 2, "3.6.16")
		if pvc {
			withClaims(o)
		}
	})
}

func TestAbortedRollout(t *testing.T) {
	tests := []struct {
		name string
		in   Observed
		want Action
	}{
		{"pvc: members on the newer minor are not restarted with the older one", aborted(true), Action{Kind: Nothing}},
		{"emptyDir: members on the newer minor are not replaced by older ones", aborted(false), Action{Kind: Nothing}},
		{"a member on the newer minor is not rolled for a pod policy change either",
			with(aborted(true), func(o *Observed) {
				o.PolicyHash = "new"
				o.Pods[0].PolicyHash, o.Pods[1].PolicyHash, o.Pods[2].PolicyHash = "new", "old", "new"
			}), Action{Kind: Nothing}},
		{"the leader on the newer minor keeps leading", with(aborted(true), func(o *Observed) { o.LeaderID = 2 }), Action{Kind: Nothing}},
		{"an aborted patch upgrade rolls the newer patch back within the minor",
			with(cluster("3.5.17", "a", "b", "c"), func(o *Observed) {
				o.ReportedVersion = "3.5.17"
				withClaims(o)
				runs(o, 1, "3.5.21")
			}), Action{Kind: RestartMember, Member: "b", Upgrade: true, Version: "3.5.17"}},
		{"members still on the older minor move to a newer patch of it; the others stay",
			with(aborted(true), func(o *Observed) { o.Version = "3.5.22" }),
			Action{Kind: MoveLeader, Member: "a", TargetID: 2}},
		{"a member whose pod is lost comes back on the newer minor: its data may have been written by it",
			with(aborted(true), func(o *Observed) { dropPod(o, "c"); o.Members[2].Healthy = false }),
			Action{Kind: RecreatePod, Member: "c", Version: "3.6.16"}},
		{"emptyDir: the surplus member is the one on the newer minor",
			with(cluster("3.5.21", "a", "b", "c", "d"), func(o *Observed) {
				o.Size, o.ReportedVersion = 3, "3.5.21"
				runs(o, 3, "3.6.16")
			}), Action{Kind: StopMember, Member: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestUpgradeCondition(t *testing.T) {
	tests := []struct {
		name       string
		in         Observed
		wantTrue   bool
		wantReason string
		wantWords  []string
	}{
		{"up to date", cluster("3.5.21", "a", "b", "c"), false, conditions.ReasonUpToDate, []string{"v3.5.21"}},
		{"in progress", with(cluster("3.5.36", "a", "b", "c"), func(o *Observed) { o.Version = "3.6.16" }),
			true, conditions.ReasonUpgradeInProgress, []string{"v3.6.16"}},
		{"refused", with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { o.Version = "3.4.37" }),
			false, conditions.ReasonDowngradeRefused, []string{"3.4.37"}},
		{"aborted: says which members stay on which version", aborted(true),
			false, conditions.ReasonUpgradeAborted, []string{"aborted", "b, c", "3.6.16"}},
		{"aborted, and the others still move to a newer patch: in progress",
			with(aborted(true), func(o *Observed) { o.Version = "3.5.22" }),
			true, conditions.ReasonUpgradeInProgress, []string{"v3.5.22", "b, c", "3.6.16"}},
		{"unknown membership: no rollout is reported", with(aborted(true), func(o *Observed) { o.MembershipKnown, o.Members = false, nil }),
			false, conditions.ReasonUpToDate, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason, msg := UpgradeCondition(tt.in)
			if ok != tt.wantTrue || reason != tt.wantReason {
				t.Fatalf("UpgradeCondition() = %v, %s (%q), want %v, %s", ok, reason, msg, tt.wantTrue, tt.wantReason)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
		})
	}
}

// A cluster of one member keeps its data on a claim: it is upgraded by
// restarting it, as no other member could take over leadership.
func TestSingleMemberUpgradeWithClaim(t *testing.T) {
	one := with(cluster("3.5.36", "a"), func(o *Observed) {
		withClaims(o)
		o.Version, o.ReportedVersion = "3.6.16", "3.5.36"
	})
	steps := []struct {
		name string
		in   Observed
		want Action
	}{
		{"the only member is restarted in place, leadership stays", one,
			Action{Kind: RestartMember, Member: "a", MemberID: 1, Upgrade: true, Version: "3.6.16"}},
		{"while its pod terminates, wait", with(one, func(o *Observed) {
			o.Pods[0].Terminating = true
			o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
		}), Action{Kind: Wait}},
		{"its pod gone, it comes back on its claim with the new version", with(one, func(o *Observed) {
			dropPod(o, "a")
			o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0
		}), Action{Kind: RecreatePod, Member: "a", Version: "3.6.16"}},
		{"back and running the new version: done", with(one, func(o *Observed) { runs(o, 0, "3.6.16") }), Action{Kind: Nothing}},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Without a claim a restarted member would come back empty: a cluster of one
// member adds the new member as a learner, promotes it, hands it leadership,
// and only then removes the old one.
func TestSingleMemberUpgradeOnEmptyDir(t *testing.T) {
	one := with(cluster("3.5.36", "a"), func(o *Observed) { o.Version, o.ReportedVersion = "3.6.16", "3.5.36" })
	withLearner := func(started bool) Observed {
		return with(one, func(o *Observed) {
			o.Pods = append(o.Pods, Pod{Name: "n", Version: "3.6.16", Image: repo + ":v3.6.16", Created: now, Ready: started})
			o.Members = append(o.Members, Member{ID: 2, Name: "n", IsLearner: true, Started: started, Healthy: started})
		})
	}
	promoted := with(withLearner(true), func(o *Observed) { o.Members[1].IsLearner = false })
	steps := []struct {
		name string
		in   Observed
		want Action
	}{
		{"add a learner with the new version", one, Action{Kind: AddMember, Version: "3.6.16", Upgrade: true}},
		{"wait for it to start", withLearner(false), Action{Kind: Wait}},
		{"promote it", withLearner(true), Action{Kind: PromoteLearner, Member: "n", MemberID: 2}},
		{"hand it leadership", promoted, Action{Kind: MoveLeader, Member: "a", MemberID: 1, TargetID: 2}},
		{"remove the old member from membership first (stopping it first would lose quorum)",
			with(promoted, func(o *Observed) { o.LeaderID = 2 }),
			Action{Kind: RemoveMember, Member: "a", MemberID: 1, Upgrade: true}},
		{"done", with(promoted, func(o *Observed) {
			o.LeaderID = 2
			dropPod(o, "a")
			o.Members = o.Members[1:]
		}), Action{Kind: Nothing}},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCurrentVersion(t *testing.T) {
	tests := []struct {
		name string
		in   Observed
		want string
	}{
		{"the lowest version a member pod runs", aborted(true), "3.5.21"},
		{"a member without a pod counts with the version reported before",
			with(aborted(true), func(o *Observed) { dropPod(o, "a") }), "3.5.21"},
		{"so does a member whose pod has not started yet",
			with(aborted(true), func(o *Observed) {
				runs(o, 0, "3.6.16")
				o.Pods[0].Pending, o.Members[0].Healthy = true, false
			}), "3.5.21"},
		{"and a member whose pod runs but does not answer",
			with(aborted(true), func(o *Observed) { runs(o, 0, "3.6.16"); o.Members[0].Healthy = false }), "3.5.21"},
		{"once every member runs, the reported version no longer counts",
			with(aborted(true), func(o *Observed) { runs(o, 0, "3.6.16") }), "3.6.16"},
		{"nothing reported yet: pending pods count (a new cluster)",
			with(aborted(true), func(o *Observed) {
				o.ReportedVersion = ""
				for i := range o.Pods {
					o.Pods[i].Pending = true
				}
			}), "3.5.21"},
		{"membership unknown: a claim without a pod counts with the version reported before",
			with(aborted(true), func(o *Observed) {
				o.MembershipKnown, o.Members = false, nil
				dropPod(o, "a")
			}), "3.5.21"},
		{"membership unknown, no pod left: the version reported before",
			with(aborted(true), func(o *Observed) { o.MembershipKnown, o.Members, o.Pods = false, nil, nil }), "3.5.21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CurrentVersion(tt.in); got != tt.want {
				t.Fatalf("CurrentVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}
