package plan

import (
	"fmt"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// pullReasons are the kubelet's waiting reasons of a container whose image
// could not be pulled (or named).
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ErrImageNeverPull": true, "RegistryUnavailable": true, "SignatureValidationFailed": true,
}

// HeldImage is the image of spec.version when the upgrade to it is held
// because a member could not pull it, "" otherwise. An upgrade is held once a
// pod with that image has waited on its pull for longer than the deadline.
// The member then goes back to the version it ran before (a claim keeps its
// data: see restartUnpulled; an emptyDir learner is removed as any dead
// surplus member is), and no other member is touched while spec.version
// names the image.
//
// The hold is remembered in status.unpulledImage (Observed.UnpulledImage),
// which the operator writes from this function on every pass, so it survives
// an operator restart and ends once spec.version names another image; setting
// spec.version away and back tries the image again. The pod that went back
// records the image too (Pod.ImageNotPulled), which stands in for status
// where status was never written.
func HeldImage(o Observed) string {
	target := desired.ImageOf(o.Repository, o.Version)
	current := CurrentVersion(o)
	if current == "" || desired.ImageOf(o.Repository, current) == target {
		return "" // nothing older to go back to: the member is dead like any other
	}
	if o.UnpulledImage == target {
		return target
	}
	for _, p := range o.Pods {
		if p.Image == target && o.pullFailed(p) {
			return target
		}
		if o.ReportedVersion == "" && p.ImageNotPulled == target {
			return target
		}
	}
	return ""
}

// pullFailed: pod p has waited on its image pull for longer than the deadline.
func (o Observed) pullFailed(p Pod) bool {
	return !p.Terminating && pullReasons[p.NotRunning] && o.overDeadline(p) && !o.answers(p.Name)
}

// answers: the member named name answers etcd's status call.
func (o Observed) answers(name string) bool {
	for _, m := range o.Members {
		if m.Name == name {
			return m.Healthy
		}
	}
	return false
}

func (o Observed) memberID(name string) uint64 {
	for _, m := range o.Members {
		if m.Name == name {
			return m.ID
		}
	}
	return 0
}

// restartUnpulled deletes the pod of a member on a claim that could not pull
// the held image; the next pass recreates it on the claim with the version it
// ran before (EffectiveVersion), whose data it still has. It runs before the
// membership check: the only member of a cluster of one leaves nobody to answer.
func restartUnpulled(o Observed) (Action, bool) {
	if !o.UsesPVC {
		return Action{}, false
	}
	image := HeldImage(o)
	if image == "" {
		return Action{}, false
	}
	for _, p := range o.Pods {
		if p.Image != image || !o.PVCs[p.Name] || !o.pullFailed(p) {
			continue
		}
		current := CurrentVersion(o)
		return Action{Kind: RestartMember, Member: p.Name, MemberID: o.memberID(p.Name), Version: current,
			Reason:       conditions.ReasonImageNotPulled,
			Message:      fmt.Sprintf("pod %s could not pull %s: restarting member %s with %s", p.Name, image, p.Name, current),
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}
