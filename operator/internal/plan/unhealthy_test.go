package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// crashing is the image of spec.version 3.5.36 in these tests, a release
// whose etcd exits as soon as it starts.
const crashing = repo + ":v3.5.36"

const newVersionUnhealthy = conditions.ReasonNewVersionUnhealthy

// upgradingToCrash: spec.version moved from 3.5.33 (reported) to 3.5.36.
func upgradingToCrash(pvc bool, names ...string) Observed {
	return with(cluster("3.5.33", names...), func(o *Observed) {
		o.Version, o.ReportedVersion, o.NotRunningDeadline = "3.5.36", "3.5.33", deadline
		if pvc {
			withClaims(o)
		}
	})
}

// crashes makes pod i a pod of version whose etcd container has been
// crash-looping for wait; its member (if any) does not answer.
func crashes(o *Observed, i int, version string, wait time.Duration) {
	runs(o, i, version)
	p := &o.Pods[i]
	p.Ready, p.NotRunning, p.NotRunningSince = false, "CrashLoopBackOff", now.Add(-wait)
	for j := range o.Members {
		if o.Members[j].Name == p.Name {
			o.Members[j].Healthy = false
		}
	}
}

// wentBack: b runs 3.5.33 again after it crashed on 3.5.36, as status records.
func wentBack(o *Observed) {
	o.UnhealthyImage = crashing
	o.Pods[1].ImageUnhealthy = crashing
}

func TestUpgradeToUnhealthyVersion(t *testing.T) {
	tests := []struct {
		name     string
		in       Observed
		want     Action
		wantHeld bool // Upgrading is False, NewVersionUnhealthy, and new members get 3.5.33
	}{
		{"pvc: a member crashing on the new version within the deadline holds every change",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) { crashes(o, 1, "3.5.36", 30*time.Second) }),
			Action{Kind: Wait}, false},
		{"pvc: past the deadline it goes back to the version it ran, on its claim, and the upgrade is held",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) { crashes(o, 1, "3.5.36", 2*time.Minute) }),
			Action{Kind: RestartMember, Member: "b", MemberID: 2, Version: "3.5.33", Reason: newVersionUnhealthy}, true},
		{"pvc: the last member to move crashes: it goes back too",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				runs(o, 0, "3.5.36")
				runs(o, 1, "3.5.36")
				crashes(o, 2, "3.5.36", 2*time.Minute)
			}),
			Action{Kind: RestartMember, Member: "c", MemberID: 3, Version: "3.5.33", Reason: newVersionUnhealthy}, true},
		{"pvc, one member: past the deadline it goes back to the version status reported",
			with(upgradingToCrash(true, "a"), func(o *Observed) {
				crashes(o, 0, "3.5.36", 2*time.Minute)
				unknownMembership(o)
			}),
			Action{Kind: RestartMember, Member: "a", Version: "3.5.33", Reason: newVersionUnhealthy}, true},
		{"pvc: a minor upgrade whose member crashes goes back to the older minor (the cluster version never moved)",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				o.Version = "3.6.16"
				crashes(o, 1, "3.6.16", 2*time.Minute)
			}),
			Action{Kind: RestartMember, Member: "b", MemberID: 2, Version: "3.5.33", Reason: newVersionUnhealthy}, true},
		{"emptyDir: the learner crashing on the new version is removed, and the upgrade is held",
			with(upgradingToCrash(false, "a", "b", "c", "d"), func(o *Observed) {
				o.Size = 3
				o.Members[3].IsLearner = true
				crashes(o, 3, "3.5.36", 2*time.Minute)
			}),
			Action{Kind: RemoveMember, Member: "d", MemberID: 4}, true},
		{"pvc: it comes back on the version it ran before, recording the image",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				o.UnhealthyImage = crashing
				dropPod(o, "b")
				o.Members[1].Healthy = false
			}),
			Action{Kind: RecreatePod, Member: "b", Version: "3.5.33", ImageUnhealthy: crashing}, true},
		{"pvc: held: no other member is moved", with(upgradingToCrash(true, "a", "b", "c"), wentBack),
			Action{Kind: Nothing}, true},
		{"pvc: held: the members that moved before stay", with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
			runs(o, 0, "3.5.36")
			runs(o, 1, "3.5.36")
			wentBack(o)
			o.Pods[1].ImageUnhealthy = ""
			o.Pods[2].ImageUnhealthy = crashing
		}), Action{Kind: Nothing}, true},
		{"held across an operator restart that lost status, from the pod's record",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				wentBack(o)
				o.UnhealthyImage, o.ReportedVersion = "", ""
			}),
			Action{Kind: Nothing}, true},
		{"emptyDir: held: no new member of the release is added",
			with(upgradingToCrash(false, "a", "b", "c"), func(o *Observed) { o.UnhealthyImage = crashing }),
			Action{Kind: Nothing}, true},
		{"another spec.version lifts the hold", with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
			wentBack(o)
			o.Version = "3.5.35"
		}), Action{Kind: RestartMember, Member: "b", Upgrade: true, Version: "3.5.35"}, false},
		{"spec.version set back to the version that runs: nothing to roll", with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
			wentBack(o)
			o.Version = "3.5.33"
		}), Action{Kind: Nothing}, false},
		{"pvc, one member: set back before the hold began, the crashing member comes back on the older patch",
			with(upgradingToCrash(true, "a"), func(o *Observed) {
				crashes(o, 0, "3.5.36", 2*time.Minute)
				unknownMembership(o)
				o.Version = "3.5.33"
			}),
			Action{Kind: RestartMember, Member: "a", Version: "3.5.33", Reason: conditions.ReasonRestartingMember}, false},
		{"a crash of a member that had not moved yet is no hold: the member is replaced",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				runs(o, 0, "3.5.36")
				crashes(o, 2, "3.5.33", 2*time.Minute)
			}),
			Action{Kind: RemoveDeadMember, Member: "c", MemberID: 3}, false},
		{"a crash on the version every member runs is no upgrade to hold: the member is replaced",
			with(cluster("3.5.36", "a", "b", "c"), func(o *Observed) {
				o.ReportedVersion, o.NotRunningDeadline = "3.5.36", deadline
				crashes(o, 1, "3.5.36", 2*time.Minute)
			}),
			Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, Options{}); !matches(got, tt.want) || got.ImageUnhealthy != tt.want.ImageUnhealthy {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
			if held := UnhealthyImage(tt.in); (held != "") != tt.wantHeld || (held != "" && held != desired.ImageOf(repo, tt.in.Version)) {
				t.Fatalf("UnhealthyImage() = %q, want held %v", held, tt.wantHeld)
			}
			ok, reason, msg := UpgradeCondition(tt.in)
			v, _ := EffectiveVersion(tt.in)
			if !tt.wantHeld {
				if reason == newVersionUnhealthy {
					t.Fatalf("UpgradeCondition() = %v, %s, %q: want no hold", ok, reason, msg)
				}
				return
			}
			if ok || reason != newVersionUnhealthy || !strings.Contains(msg, tt.in.Version) {
				t.Errorf("UpgradeCondition() = %v, %s, %q: want False, %s, naming %s", ok, reason, msg, newVersionUnhealthy, tt.in.Version)
			}
			if v != "3.5.33" {
				t.Errorf("EffectiveVersion() = %s while held, want 3.5.33", v)
			}
		})
	}
}

// TestCurrentVersionCountsHealthyMembers: status.currentVersion is the
// version members run healthily. A member that does not answer counts with
// the version reported before, so a release that crashes never becomes the
// current version, and spec.version can be set back to the one that ran.
func TestCurrentVersionCountsHealthyMembers(t *testing.T) {
	tests := []struct {
		name string
		in   Observed
		want string
	}{
		{"the only member crash-loops on the new version",
			with(upgradingToCrash(true, "a"), func(o *Observed) {
				crashes(o, 0, "3.5.36", 2*time.Minute)
				unknownMembership(o)
			}), "3.5.33"},
		{"the last member to move crash-loops on it",
			with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
				runs(o, 0, "3.5.36")
				runs(o, 1, "3.5.36")
				crashes(o, 2, "3.5.36", 10*time.Second)
			}), "3.5.33"},
		{"every member answers on the new version", with(upgradingToCrash(true, "a", "b", "c"), func(o *Observed) {
			for i := range o.Pods {
				runs(o, i, "3.5.36")
			}
		}), "3.5.36"},
		{"a new cluster: nothing reported yet, pods count as they are",
			with(upgradingToCrash(true, "a"), func(o *Observed) {
				o.ReportedVersion = ""
				crashes(o, 0, "3.5.36", 10*time.Second)
				unknownMembership(o)
			}), "3.5.36"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CurrentVersion(tt.in); got != tt.want {
				t.Fatalf("CurrentVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}
