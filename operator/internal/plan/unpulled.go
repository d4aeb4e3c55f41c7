package plan

import (
	"fmt"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
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
// data: see restartHeld; an emptyDir learner is removed as any dead
// surplus member is), and no other member is moved while spec.version
// names the image.
//
// The hold is remembered in status.unpulledImage (Observed.UnpulledImage),
// which the operator writes from this function on every pass, so it survives
// an operator restart and ends once spec.version names another image; setting
// spec.version away and back tries the image again. The pod that went back
// records the image too (Pod.ImageNotPulled), which stands in for status
// where status was never written.
func HeldImage(o Observed) string {
	return heldImage(o, o.UnpulledImage, func(p Pod) string { return p.ImageNotPulled }, o.pullFailed)
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

// restartHeld deletes the pod of a member on a claim that did not run the
// image of spec.version while the upgrade to it is held: it could not pull
// it (HeldImage) or crashed on it (UnhealthyImage). The next pass recreates
// it on the claim with version, the effective version: the one it ran
// before, whose data it still has. So does a member that failed on a later
// patch of the effective version's minor after spec.version was set back
// (a rollback before the hold began). It runs before the membership check:
// the only member of a cluster of one leaves nobody to answer.
func restartHeld(o Observed, version string) (Action, bool) {
	if !o.UsesPVC {
		return Action{}, false
	}
	unpulled, unhealthy := HeldImage(o), UnhealthyImage(o)
	for _, p := range o.Pods {
		if !o.PVCs[p.Name] {
			continue
		}
		reason, failed := "", ""
		switch {
		case unpulled != "" && p.Image == unpulled && o.pullFailed(p):
			reason, failed = conditions.ReasonImageNotPulled, fmt.Sprintf("pod %s could not pull %s", p.Name, p.Image)
		case unhealthy != "" && p.Image == unhealthy && o.crashed(p):
			reason, failed = conditions.ReasonNewVersionUnhealthy, fmt.Sprintf("pod %s did not become healthy on %s", p.Name, p.Image)
		case (o.pullFailed(p) || o.crashed(p)) && laterPatch(p.Version, version):
			reason, failed = conditions.ReasonRestartingMember, fmt.Sprintf("pod %s did not run %s, and spec.version went back", p.Name, p.Image)
		default:
			continue
		}
		return Action{Kind: RestartMember, Member: p.Name, MemberID: o.memberID(p.Name), Version: version,
			Reason:       reason,
			Message:      fmt.Sprintf("%s: restarting member %s with %s", failed, p.Name, version),
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// laterPatch reports whether version v is a later patch release of target's
// minor release.
func laterPatch(v, target string) bool {
	pv, errV := ParseVersion(v)
	pt, errT := ParseVersion(target)
	return errV == nil && errT == nil && pv.Major() == pt.Major() && pv.Minor() == pt.Minor() && pt.LessThan(pv)
}
