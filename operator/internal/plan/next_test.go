package plan

import (
	"testing"
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

const repo = "quay.io/coreos/etcd"

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// cluster builds an observation of a healthy cluster: one pod and one
// healthy voter per name, all at version, the first name leading.
func cluster(version string, names ...string) Observed {
	o := Observed{
		Now: now, Size: len(names), Version: version, Repository: repo,
		Phase: etcdv1beta2.PhaseRunning, MembershipKnown: true, PVCs: map[string]bool{},
	}
	for i, n := range names {
		o.Pods = append(o.Pods, Pod{Name: n, Version: version, Image: repo + ":v" + version, Ready: true, Created: now.Add(-time.Hour)})
		o.Members = append(o.Members, Member{ID: uint64(i + 1), Name: n, Started: true, Healthy: true})
	}
	o.LeaderID = 1
	return o
}

// with returns a changed deep copy of o, so table rows never share slices.
func with(o Observed, f func(*Observed)) Observed {
	o.Pods = append([]Pod(nil), o.Pods...)
	o.Members = append([]Member(nil), o.Members...)
	pvcs := map[string]bool{}
	for k, v := range o.PVCs {
		pvcs[k] = v
	}
	o.PVCs = pvcs
	if o.PVCCreated != nil {
		created := map[string]time.Time{}
		for k, v := range o.PVCCreated {
			created[k] = v
		}
		o.PVCCreated = created
	}
	f(&o)
	return o
}

func dropPod(o *Observed, name string) {
	var pods []Pod
	for _, p := range o.Pods {
		if p.Name != name {
			pods = append(pods, p)
		}
	}
	o.Pods = pods
}

func TestNext(t *testing.T) {
	healthy := cluster("3.5.21", "a", "b", "c")
	// upgradable runs a 3.5 patch that 3.6 may be reached from (MinorUpgradeFloors).
	upgradable := cluster("3.5.36", "a", "b", "c")
	tests := []struct {
		name string
		in   Observed
		opts Options
		want Action // only the fields set here are compared
	}{
		{"paused makes no change", with(healthy, func(o *Observed) { o.Paused = true; o.Members = nil; o.Pods = nil }),
			Options{}, Action{Kind: Nothing}},
		{"steady state does nothing", healthy, Options{}, Action{Kind: Nothing}},
		{"new cluster bootstraps every member at once",
			Observed{Now: now, Size: 3, Version: "3.5.21", Repository: repo},
			Options{}, Action{Kind: Bootstrap, Count: 3, Version: "3.5.21"}},
		{"a bootstrap cut short is completed with the same peers",
			with(healthy, func(o *Observed) {
				o.MembershipKnown, o.Members, o.Phase = false, nil, etcdv1beta2.PhaseCreating
				for i := range o.Pods {
					o.Pods[i].BootstrapPeers = []string{"a", "b", "c"}
				}
				dropPod(o, "b")
			}),
			Options{}, Action{Kind: ResumeBootstrap, Member: "b"}},
		{"a running cluster that lost quorum is never bootstrapped again",
			with(healthy, func(o *Observed) {
				o.MembershipKnown, o.Members = false, nil
				for i := range o.Pods {
					o.Pods[i].BootstrapPeers = []string{"a", "b", "c"}
				}
				dropPod(o, "b")
			}),
			Options{}, Action{Kind: Wait}},
		{"pods but no answer yet: wait",
			with(healthy, func(o *Observed) { o.MembershipKnown = false; o.Members = nil; o.Phase = etcdv1beta2.PhaseCreating }),
			Options{}, Action{Kind: Wait}},
		{"every pod gone on emptyDir after running: failed",
			with(healthy, func(o *Observed) { o.MembershipKnown = false; o.Members = nil; o.Pods = nil }),
			Options{}, Action{Kind: Fail}},
		{"a failed cluster stays failed",
			with(healthy, func(o *Observed) {
				o.MembershipKnown, o.Members, o.Pods, o.Phase = false, nil, nil, etcdv1beta2.PhaseFailed
			}),
			Options{}, Action{Kind: Fail}},
		{"member without a pod is removed first",
			with(healthy, func(o *Observed) { dropPod(o, "b") }),
			Options{}, Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2}},
		{"member with a failed pod is removed first",
			with(healthy, func(o *Observed) { o.Pods[2].Failed = true; o.Members[2].Healthy = false }),
			Options{}, Action{Kind: RemoveDeadMember, Member: "c", MemberID: 3}},
		{"unsafe: dead member stays, its pod is recreated",
			with(healthy, func(o *Observed) { dropPod(o, "b") }),
			Options{SkipDeadMemberRemoval: true}, Action{Kind: RecreatePod, Member: "b", Version: "3.5.21"}},
		{"a started learner is promoted",
			with(healthy, func(o *Observed) {
				o.Size = 4
				o.Pods = append(o.Pods, Pod{Name: "d", Version: "3.5.21", Image: repo + ":v3.5.21", Created: now})
				o.Members = append(o.Members, Member{ID: 4, Name: "d", IsLearner: true, Started: true, Healthy: true})
			}),
			Options{}, Action{Kind: PromoteLearner, Member: "d", MemberID: 4}},
		{"a learner that has not started is waited for",
			with(healthy, func(o *Observed) {
				o.Size = 4
				o.Pods = append(o.Pods, Pod{Name: "d", Version: "3.5.21", Image: repo + ":v3.5.21", Created: now})
				o.Members = append(o.Members, Member{ID: 4, Name: "d", IsLearner: true})
			}),
			Options{}, Action{Kind: Wait}},
		{"an unhealthy member holds every change",
			with(healthy, func(o *Observed) { o.Size = 5; o.Members[1].Healthy = false }),
			Options{}, Action{Kind: Wait}},
		{"no leader holds every change",
			with(healthy, func(o *Observed) { o.Size = 5; o.LeaderID = 0 }),
			Options{}, Action{Kind: Wait}},
		{"scale up adds one member", with(healthy, func(o *Observed) { o.Size = 5 }),
			Options{}, Action{Kind: AddMember, Version: "3.5.21"}},
		{"scale down from 3 voters stops a follower first, never the leader", with(healthy, func(o *Observed) { o.Size = 2 }),
			Options{}, Action{Kind: StopMember, Member: "b", MemberID: 2}},
		{"scale down: the stopped member is removed from membership once its pod is gone",
			with(healthy, func(o *Observed) { o.Size = 2; dropPod(o, "b"); o.Members[1].Healthy = false }),
			Options{}, Action{Kind: RemoveMember, Member: "b", MemberID: 2}},
		{"scale down: a stopped member's terminating pod is waited for",
			with(healthy, func(o *Observed) { o.Size = 2; o.Pods[1].Terminating = true; o.Members[1].Healthy = false }),
			Options{}, Action{Kind: Wait}},
		{"scale down: a stopped member whose pod failed is removed, not restarted",
			with(healthy, func(o *Observed) { o.Size = 2; o.Pods[1].Failed = true; o.Members[1].Healthy = false }),
			Options{}, Action{Kind: RemoveMember, Member: "b", MemberID: 2}},
		{"scale 2 to 1 removes the follower from membership first (stopping it would lose quorum)",
			with(cluster("3.5.21", "a", "b"), func(o *Observed) { o.Size = 1 }),
			Options{}, Action{Kind: RemoveMember, Member: "b", MemberID: 2}},
		{"unsafe modes never bring back a member stopped on purpose",
			with(healthy, func(o *Observed) { o.Size = 2; dropPod(o, "b") }),
			Options{SkipDeadMemberRemoval: true}, Action{Kind: RemoveMember, Member: "b", MemberID: 2}},
		{"pvc: a stopped member is removed (its claim with it), not restarted on its claim",
			with(healthy, func(o *Observed) {
				o.UsesPVC, o.Size = true, 2
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "b")
			}),
			Options{}, Action{Kind: RemoveMember, Member: "b", MemberID: 2}},
		{"upgrade on emptyDir adds an up-to-date member first",
			with(upgradable, func(o *Observed) { o.Version = "3.6.5" }),
			Options{}, Action{Kind: AddMember, Version: "3.6.5", Upgrade: true}},
		{"upgrade on emptyDir then removes an outdated follower",
			with(cluster("3.5.36", "a", "b", "c", "d"), func(o *Observed) {
				o.Size, o.Version = 3, "3.6.5"
				o.Pods[3].Version, o.Pods[3].Image = "3.6.5", repo+":v3.6.5"
			}),
			Options{}, Action{Kind: StopMember, Member: "b", MemberID: 2, Upgrade: true}},
		{"upgrade on emptyDir with spec.size 1 removes the outdated member from membership first",
			with(cluster("3.5.36", "a", "b"), func(o *Observed) {
				o.Size, o.Version = 1, "3.6.5"
				o.LeaderID = 2
				o.Pods[1].Version, o.Pods[1].Image = "3.6.5", repo+":v3.6.5"
			}),
			Options{}, Action{Kind: RemoveMember, Member: "a", MemberID: 1, Upgrade: true}},
		{"upgrade with another voter unhealthy waits instead of stopping one",
			with(cluster("3.5.36", "a", "b", "c", "d"), func(o *Observed) {
				o.Size, o.Version = 3, "3.6.5"
				o.Pods[3].Version, o.Pods[3].Image = "3.6.5", repo+":v3.6.5"
				o.Members[2].Healthy = false
			}),
			Options{}, Action{Kind: Wait}},
		{"upgrade moves leadership off an outdated leader before removing it",
			with(cluster("3.6.5", "a", "b", "c", "d"), func(o *Observed) {
				o.Size = 3
				o.Pods[0].Version, o.Pods[0].Image = "3.5.36", repo+":v3.5.36"
			}),
			Options{}, Action{Kind: MoveLeader, Member: "a", MemberID: 1, TargetID: 2}},
		{"leadership goes to the most caught-up up-to-date follower",
			with(cluster("3.6.5", "a", "b", "c", "d"), func(o *Observed) {
				o.Size = 3
				o.Pods[0].Version, o.Pods[0].Image = "3.5.36", repo+":v3.5.36"
				o.Members[1].RaftIndex, o.Members[2].RaftIndex, o.Members[3].RaftIndex = 90, 100, 95
			}),
			Options{}, Action{Kind: MoveLeader, Member: "a", MemberID: 1, TargetID: 3}},
		{"repository change is an upgrade too",
			with(healthy, func(o *Observed) { o.Repository = "registry.example/etcd" }),
			Options{}, Action{Kind: AddMember, Version: "3.5.21", Upgrade: true}},
		{"downgrade is refused: nothing changes",
			with(healthy, func(o *Observed) { o.Version = "3.4.37" }),
			Options{}, Action{Kind: Nothing}},
		{"skipping a minor is refused: nothing changes",
			with(cluster("3.4.37", "a", "b", "c"), func(o *Observed) { o.Version = "3.6.5" }),
			Options{}, Action{Kind: Nothing}},
		{"refused version: new members keep the running version",
			with(healthy, func(o *Observed) { o.Version = "3.4.37"; o.Size = 4 }),
			Options{}, Action{Kind: AddMember, Version: "3.5.21"}},
		{"pvc: a member whose pod is gone restarts on its claim",
			with(healthy, func(o *Observed) {
				o.UsesPVC = true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "c")
			}),
			Options{}, Action{Kind: RecreatePod, Member: "c", Version: "3.5.21"}},
		{"pvc: upgrade restarts an outdated follower in place",
			with(upgradable, func(o *Observed) {
				o.UsesPVC = true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				o.Version = "3.6.5"
			}),
			Options{}, Action{Kind: RestartMember, Member: "b", MemberID: 2, Upgrade: true}},
		{"pvc: the last outdated member is the leader: move leadership",
			with(cluster("3.6.5", "a", "b", "c"), func(o *Observed) {
				o.UsesPVC = true
				o.Pods[0].Version, o.Pods[0].Image = "3.5.36", repo+":v3.5.36"
			}),
			Options{}, Action{Kind: MoveLeader, MemberID: 1, TargetID: 2}},
		{"pvc: a terminating member is waited for",
			with(upgradable, func(o *Observed) { o.UsesPVC = true; o.Version = "3.6.5"; o.Pods[1].Terminating = true }),
			Options{}, Action{Kind: Wait}},
		{"an old pod that is no member is deleted",
			with(healthy, func(o *Observed) { o.Pods = append(o.Pods, Pod{Name: "x", Created: now.Add(-time.Minute)}) }),
			Options{}, Action{Kind: DeleteOrphanPod, Member: "x"}},
		{"a young pod that is no member yet is given time",
			with(healthy, func(o *Observed) { o.Pods = append(o.Pods, Pod{Name: "x", Created: now.Add(-5 * time.Second)}) }),
			Options{}, Action{Kind: Wait, RequeueAfter: OrphanGrace - 5*time.Second}},
		{"pvc upgrade: a member restarting and not yet rejoined is waited for",
			with(healthy, func(o *Observed) {
				o.UsesPVC, o.Version = true, "3.6.5"
				o.Pods[0].Version, o.Pods[0].Image, o.Pods[0].Terminating = "3.6.5", repo+":v3.6.5", true
				o.Members[0].Healthy = false
			}),
			Options{}, Action{Kind: Wait}},
		{"unsafe: the next member restarts before the last one rejoined",
			with(upgradable, func(o *Observed) {
				o.UsesPVC, o.Version = true, "3.6.5"
				o.Pods[0].Version, o.Pods[0].Image = "3.6.5", repo+":v3.6.5"
				o.Members[0].Healthy = false
			}),
			Options{RestartBeforeRejoin: true}, Action{Kind: RestartMember, Member: "b", MemberID: 2, Upgrade: true}},
		{"unsafe: still waits for the last one's pod to go",
			with(upgradable, func(o *Observed) {
				o.UsesPVC, o.Version = true, "3.6.5"
				o.Pods[0].Terminating = true
				o.Members[0].Healthy = false
			}),
			Options{RestartBeforeRejoin: true}, Action{Kind: Wait}},
		{"a member that does not answer while its pod runs is waited for, not replaced",
			with(healthy, func(o *Observed) { o.Members[1].Healthy = false; o.Pods[1].Ready = false }),
			Options{}, Action{Kind: Wait}},
		{"unsafe: a member that does not answer while its pod runs is replaced at once",
			with(healthy, func(o *Observed) { o.Members[1].Healthy = false; o.Pods[1].Ready = false; o.UnansweringIsDead = true }),
			Options{ReplaceUnanswering: true}, Action{Kind: RemoveDeadMember, Member: "b", MemberID: 2}},
		{"unsafe: a member still starting is not taken for dead",
			with(healthy, func(o *Observed) {
				o.Members[1].Healthy = false
				o.Pods[1].Ready, o.Pods[1].Created = false, now.Add(-5*time.Second)
				o.UnansweringIsDead = true
			}),
			Options{ReplaceUnanswering: true}, Action{Kind: Wait}},
		{"unsafe: upgrade restarts every outdated member at once",
			with(upgradable, func(o *Observed) { o.Version = "3.6.5"; o.Members[1].Healthy = false }),
			Options{UpgradeAllAtOnce: true}, Action{Kind: RestartAll, Names: []string{"a", "b", "c"}}},
		{"unsafe: a lost majority throws away the rest and bootstraps anew",
			with(healthy, func(o *Observed) {
				o.UsesPVC, o.MembershipKnown, o.Members = true, false, nil
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "a")
				dropPod(o, "b")
			}),
			Options{RebootstrapAfterQuorumLoss: true}, Action{Kind: Rebootstrap, Count: 3, Names: []string{"a", "b", "c"}}},
		{"unsafe: a majority lost one pod after another, the first already recreated on its claim but not ready",
			with(healthy, func(o *Observed) {
				o.UsesPVC, o.MembershipKnown, o.Members = true, false, nil
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "b")
				o.Pods[0].Ready = false // a, recreated a moment ago
			}),
			Options{RebootstrapAfterQuorumLoss: true}, Action{Kind: Rebootstrap, Count: 3, Names: []string{"a", "b", "c"}}},
		{"unsafe mode: one pod lost keeps quorum, and the member is restarted on its claim",
			with(healthy, func(o *Observed) {
				o.UsesPVC = true
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "b")
			}),
			Options{RebootstrapAfterQuorumLoss: true}, Action{Kind: RecreatePod, Member: "b"}},
		{"the same lost majority on claims is restarted on its volumes",
			with(healthy, func(o *Observed) {
				o.UsesPVC, o.MembershipKnown, o.Members = true, false, nil
				o.PVCs = map[string]bool{"a": true, "b": true, "c": true}
				dropPod(o, "a")
				dropPod(o, "b")
			}),
			Options{}, Action{Kind: RecreatePod, Member: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.in, tt.opts); !matches(got, tt.want) {
				t.Fatalf("Next() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// matches compares only the fields set in w.
func matches(got, w Action) bool {
	return got.Kind == w.Kind &&
		(w.Member == "" || got.Member == w.Member) &&
		(w.MemberID == 0 || got.MemberID == w.MemberID) &&
		(w.TargetID == 0 || got.TargetID == w.TargetID) &&
		(w.Count == 0 || got.Count == w.Count) &&
		(w.Version == "" || got.Version == w.Version) &&
		(!w.Upgrade || got.Upgrade) &&
		(w.Reason == "" || got.Reason == w.Reason) &&
		(w.NotRunning == "" || got.NotRunning != "") &&
		(w.Stuck == "" || got.Stuck == w.Stuck) &&
		(w.RequeueAfter == 0 || got.RequeueAfter == w.RequeueAfter) &&
		(w.Names == nil || equal(got.Names, w.Names))
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCheckVersionChange(t *testing.T) {
	tests := []struct {
		current, target, wantReason string
	}{
		{"3.5.21", "3.5.21", ""},
		{"3.5.17", "3.5.21", ""},
		{"3.5.36", "3.6.5", ""},
		{"3.5.21", "3.6.5", conditions.ReasonOldPatchRefused},
		{"3.5.32", "3.6.0-rc.1", ""},
		{"3.2.13", "3.3.0", ""}, // coreos v0.9.4's clusters: no floor below 3.6
		{"3.4.37", "3.5.21", ""},
		{"", "3.6.5", ""},
		{"3.5.21", "3.5.17", conditions.ReasonDowngradeRefused},
		{"3.6.5", "3.5.21", conditions.ReasonDowngradeRefused},
		{"3.4.37", "3.6.5", conditions.ReasonVersionSkewRefused},
		{"3.6.5", "4.0.0", conditions.ReasonVersionSkewRefused},
	}
	for _, tt := range tests {
		r := CheckVersionChange(tt.current, tt.target)
		got := ""
		if r != nil {
			got = r.Reason
			if r.Message == "" {
				t.Errorf("%s→%s: refusal without a message", tt.current, tt.target)
			}
		}
		if got != tt.wantReason {
			t.Errorf("CheckVersionChange(%q, %q) reason = %q, want %q", tt.current, tt.target, got, tt.wantReason)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, ok := range []string{"3.5.21", "v3.6.5", "3.6.0-rc.1"} {
		if _, err := ParseVersion(ok); err != nil {
			t.Errorf("ParseVersion(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"latest", "3.x", "3.5", "", "3.5.-1"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted a non-version", bad)
		}
	}
}
