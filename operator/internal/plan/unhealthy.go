package plan

import (
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// crashReasons are the ways a member pod's etcd container stops for
// something in its image: etcd exits (or the kubelet cannot start the
// image's command) every time it is started. Scheduling, pulls and a lost
// node say nothing about the release.
var crashReasons = map[string]bool{
	"CrashLoopBackOff": true, ContainerExited: true, "RunContainerError": true, "CreateContainerError": true,
}

// UnhealthyImage is the image of spec.version when the upgrade to it is held
// because a member did not become healthy on it, "" otherwise. An upgrade is
// held once a pod with that image has crashed (crashReasons) for longer than
// the deadline while its member does not answer and the members still have
// an older version to go back to. The member then goes back to the version
// it ran before, on its claim (restartHeld); an emptyDir learner is removed
// as any dead surplus member is; and no other member is moved while
// spec.version names the image. Without the hold, the dead member would be
// replaced by a new member of the same release, which crashes too, forever.
//
// Going back is safe for a patch release, which keeps the data format, and
// for the next minor release as long as the cluster version has not moved
// (the leader moves it only once every member answers on the new release);
// were it moved, the older etcd refuses to start on the data rather than
// read it. Either way no membership changes and no data is deleted.
//
// As HeldImage, the hold is remembered in status.unhealthyImage
// (Observed.UnhealthyImage), written from this function on every pass, and on
// the pod that went back (Pod.ImageUnhealthy) where status was never written;
// it ends once spec.version names another image.
func UnhealthyImage(o Observed) string {
	return heldImage(o, o.UnhealthyImage, func(p Pod) string { return p.ImageUnhealthy }, o.crashed)
}

// crashed: pod p's etcd has been crashing for longer than the deadline.
func (o Observed) crashed(p Pod) bool {
	return !p.Terminating && crashReasons[p.NotRunning] && o.overDeadline(p) && !o.answers(p.Name)
}

// heldImage is the image of spec.version when an upgrade to it is held:
// recorded (the status field the hold is kept in) names it, or a pod of that
// image failed, or (status lost) a pod that went back records it. Never
// while the members run that image already: then there is nothing older to
// go back to, and a failing member is dead like any other.
func heldImage(o Observed, recorded string, record func(Pod) string, failed func(Pod) bool) string {
	target := desired.ImageOf(o.Repository, o.Version)
	current := CurrentVersion(o)
	if current == "" || desired.ImageOf(o.Repository, current) == target {
		return ""
	}
	if recorded == target {
		return target
	}
	for _, p := range o.Pods {
		if p.Image == target && failed(p) {
			return target
		}
		if o.ReportedVersion == "" && record(p) == target {
			return target
		}
	}
	return ""
}

// held reports whether the upgrade to spec.version is held, for either reason.
func held(o Observed) bool {
	return HeldImage(o) != "" || UnhealthyImage(o) != ""
}
