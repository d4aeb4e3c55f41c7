package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

const (
	deadline = time.Minute
	// missing is the image of spec.version 3.6.99, which no registry has.
	missing = repo + ":v3.6.99"
)

// upgrading: spec.version moved from 3.5.36 (reported) to 3.6.99.
func upgrading(pvc bool, names ...string) Observed {
	return with(cluster("3.5.36", names...), func(o *Observed) {
		o.Version, o.ReportedVersion, o.NotRunningDeadline = "3.6.99", "3.5.36", deadline
		if pvc {
			withClaims(o)
		}
	})
}

// cannotPull makes pod i a fresh pod of 3.6.99 that has waited on its image
// pull for wait; its member (if any) does not answer.
func cannotPull(o *Observed, i int, wait time.Duration) {
	runs(o, i, "3.6.99")
	p := &o.Pods[i]
	p.Pending, p.Ready, p.NotRunning, p.NotRunningSince = true, false, "ImagePullBackOff", now.Add(-wait)
	for j := range o.Members {
		if o.Members[j].Name == p.Name {
			o.Members[j].Healthy = false
		}
	}
}

// unknownMembership: the only member's pod does not run, so nobody answers.
func unknownMembership(o *Observed) { o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0 }

// heldBack: b runs 3.5.36 again after it could not pull 3.6.99, as status records.
func heldBack(o *Observed) {
	o.UnpulledImage = missing
	o.Pods[1].ImageNotPulled = missing
}

func TestUnpulledImage(t *testing.T) {
	tests := []struct {
		name      string
		in        Observed
		want      Action
		wantHeld  bool
		wantImage string // Action.ImageNotPulled
	}{
		{"pvc: a member waiting on its image within the deadline holds every change",
			with(upgrading(true, "a", "b", "c"), func(o *Observed) { cannotPull(o, 1, 30*time.Second) }),
			Action{Kind: Wait}, false, ""},
		{"pvc: past the deadline it is restarted, and the upgrade is held",
			with(upgrading(true, "a", "b", "c"), func(o *Observed) { cannotPull(o, 1, 2*time.Minute) }),
			Action{Kind: RestartMember, Member: "b", MemberID: 2, Reason: conditions.ReasonImageNotPulled}, true, ""},
		{"pvc: it comes back on the version it ran before, recording the image",
			with(upgrading(true, "a", "b", "c"), func(o *Observed) {
				o.UnpulledImage = missing
				dropPod(o, "b")
				o.Members[1].Healthy = false
			}),
			Action{Kind: RecreatePod, Member: "b", Version: "3.5.36"}, true, missing},
		{"pvc: held: no other member is touched", with(upgrading(true, "a", "b", "c"), heldBack),
			Action{Kind: Nothing}, true, ""},
		{"held across an operator restart that lost status, from the pod's record",
			with(upgrading(true, "a", "b", "c"), func(o *Observed) {
				heldBack(o)
				o.UnpulledImage, o.ReportedVersion = "", ""
			}),
			Action{Kind: Nothing}, true, ""},
		{"a new spec.version lifts the hold", with(upgrading(true, "a", "b", "c"), func(o *Observed) {
			heldBack(o)
			o.Version = "3.6.16"
		}), Action{Kind: RestartMember, Member: "b", Upgrade: true, Version: "3.6.16"}, false, ""},
		{"spec.version set back to the image after status dropped it: tried again",
			with(upgrading(true, "a", "b", "c"), func(o *Observed) {
				heldBack(o)
				o.UnpulledImage = ""
			}),
			Action{Kind: RestartMember, Member: "b", Upgrade: true, Version: "3.6.99"}, false, ""},
		{"pvc, one member: past the deadline it is restarted",
			with(upgrading(true, "a"), func(o *Observed) { cannotPull(o, 0, 2*time.Minute); unknownMembership(o) }),
			Action{Kind: RestartMember, Member: "a", Reason: conditions.ReasonImageNotPulled}, true, ""},
		{"pvc, one member: it comes back on the version status reported",
			with(upgrading(true, "a"), func(o *Observed) {
				o.UnpulledImage = missing
				dropPod(o, "a")
				unknownMembership(o)
			}),
			Action{Kind: RecreatePod, Member: "a", Version: "3.5.36"}, true, missing},
		{"emptyDir: the learner that cannot pull is removed past the deadline, and the upgrade is held",
			with(upgrading(false, "a", "b", "c", "d"), func(o *Observed) {
				o.Size = 3
				o.Members[3].IsLearner = true
				cannotPull(o, 3, 2*time.Minute)
			}),
			Action{Kind: RemoveMember, Member: "d", MemberID: 4}, true, ""},
		{"emptyDir: held: no new member is added", with(upgrading(false, "a", "b", "c"), func(o *Observed) { o.UnpulledImage = missing }),
			Action{Kind: Nothing}, true, ""},
		{"a pull failure of the running version's image is no upgrade to hold",
			with(cluster("3.5.36", "a", "b", "c", "d"), func(o *Observed) {
				o.Size, o.ReportedVersion, o.NotRunningDeadline = 4, "3.5.36", deadline
				o.Members[3].IsLearner = true
				cannotPull(o, 3, 2*time.Minute)
				runs(o, 3, "3.5.36")
			}),
			Action{Kind: RemoveDeadMember, Member: "d", MemberID: 4}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if !matches(got, tt.want) || got.ImageNotPulled != tt.wantImage {
				t.Fatalf("Next() = %+v\nwant %+v (ImageNotPulled %q)", got, tt.want, tt.wantImage)
			}
			held := HeldImage(tt.in)
			if (held != "") != tt.wantHeld || (held != "" && held != missing) {
				t.Fatalf("HeldImage() = %q, want held %v", held, tt.wantHeld)
			}
			if !tt.wantHeld {
				return
			}
			ok, reason, msg := UpgradeCondition(tt.in)
			if ok || reason != conditions.ReasonImageNotPulled || !strings.Contains(msg, missing) {
				t.Errorf("UpgradeCondition() = %v, %s, %q: want False, ImageNotPulled, naming %s", ok, reason, msg, missing)
			}
			if v, _ := EffectiveVersion(tt.in); v != "3.5.36" {
				t.Errorf("EffectiveVersion() = %s while held, want 3.5.36", v)
			}
		})
	}
}
