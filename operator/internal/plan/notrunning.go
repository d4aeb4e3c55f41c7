package plan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// DefaultNotRunningDeadline is how long a member pod may stay in a state
// that does not run etcd (see NotRunning) before its member counts as dead.
const DefaultNotRunningDeadline = 60 * time.Second

// Ways a member pod does not run etcd, as Pod.NotRunning. Besides these,
// Pod.NotRunning holds the kubelet's reason for a container that waits on an
// error (ImagePullBackOff, ErrImagePull, CrashLoopBackOff,
// CreateContainerConfigError, ...), or the scheduler's reason for a pod it
// could not place (Unschedulable).
const (
	// NotScheduled: the pod is pending on no node and the scheduler gave no reason.
	NotScheduled = "NotScheduled"
	// ContainerExited: the etcd container stopped and has not started again.
	ContainerExited = "ContainerExited"
	// TerminatingOnNotReadyNode: the pod is being deleted, but its node is
	// NotReady or unreachable, so no kubelet will ever confirm the deletion.
	TerminatingOnNotReadyNode = "TerminatingOnNotReadyNode"
)

// startingReasons are the container waiting reasons of a pod that is on its
// way: image pulls and volume mounts can take long without anything being
// wrong, so they never make a member dead.
var startingReasons = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// NotRunning says whether a member pod is in a state that does not run etcd
// and will not change by itself, and since when. It reads only the pod's own
// status (condition transition times, set by the scheduler, the kubelet and
// the node controller), so an operator that restarts keeps the clock.
//
// Not covered (reason ""): a pod that runs, ready or not (a startup probe
// still within its window, a member catching up); a pod still being created
// (pulling its image or mounting its volume, with no error); a failed pod
// (Pod.Failed says so already); a pod terminating on a node that works (its
// kubelet stops it within the grace period).
func NotRunning(p *corev1.Pod) (reason string, since time.Time) {
	if p.DeletionTimestamp != nil {
		return terminatingOnLostNode(p)
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return "", time.Time{}
	}
	if p.Spec.NodeName == "" && (p.Status.Phase == corev1.PodPending || p.Status.Phase == "") {
		scheduled := condition(p, corev1.PodScheduled)
		switch {
		case scheduled == nil:
			return NotScheduled, p.CreationTimestamp.Time
		case scheduled.Status == corev1.ConditionTrue:
			return "", time.Time{} // bound a moment ago; the pod's node is not in this copy yet
		case scheduled.Reason != "":
			return scheduled.Reason, scheduled.LastTransitionTime.Time
		default:
			return NotScheduled, scheduled.LastTransitionTime.Time
		}
	}
	st := etcdContainerStatus(p)
	if st == nil {
		return "", time.Time{} // the kubelet has not reported yet
	}
	switch {
	case st.State.Running != nil:
		return "", time.Time{}
	case st.State.Waiting != nil && !startingReasons[st.State.Waiting.Reason]:
		reason = st.State.Waiting.Reason
	case st.State.Terminated != nil:
		reason = ContainerExited
	default:
		return "", time.Time{}
	}
	// Waiting and terminated states carry no time of their own: the clock is
	// when the containers last stopped being ready (or, for a pod that never
	// ran, when it was scheduled).
	since = notReadySince(p)
	if since.IsZero() {
		return "", time.Time{}
	}
	return reason, since
}

// terminatingOnLostNode recognises a pod whose node is NotReady: the node
// controller then marks the pod not Ready and leaves every other condition
// as the absent kubelet last reported it, so Ready is False while
// ContainersReady is still True, which a kubelet never reports for a pod
// without readiness gates (member pods have none). The clock starts when
// both hold: the deletion was requested and the node was lost.
func terminatingOnLostNode(p *corev1.Pod) (string, time.Time) {
	ready, containers := condition(p, corev1.PodReady), condition(p, corev1.ContainersReady)
	if ready == nil || containers == nil || ready.Status != corev1.ConditionFalse || containers.Status != corev1.ConditionTrue {
		return "", time.Time{}
	}
	requested := p.DeletionTimestamp.Time
	if g := p.DeletionGracePeriodSeconds; g != nil {
		requested = requested.Add(-time.Duration(*g) * time.Second)
	}
	since := ready.LastTransitionTime.Time
	if requested.After(since) {
		since = requested
	}
	return TerminatingOnNotReadyNode, since
}

func notReadySince(p *corev1.Pod) time.Time {
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		if c := condition(p, t); c != nil {
			if c.Status == corev1.ConditionTrue {
				return time.Time{} // stale status; look again later
			}
			return c.LastTransitionTime.Time
		}
	}
	if c := condition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return p.CreationTimestamp.Time
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// etcdContainerStatus is the status of the etcd container, else of the only container.
func etcdContainerStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == desired.ContainerName {
			return &p.Status.ContainerStatuses[i]
		}
	}
	if len(p.Status.ContainerStatuses) == 1 {
		return &p.Status.ContainerStatuses[0]
	}
	return nil
}

// overDeadline reports whether pod p has not run for longer than the deadline.
func (o Observed) overDeadline(p Pod) bool {
	return p.NotRunning != "" && o.NotRunningDeadline > 0 && o.Now.Sub(p.NotRunningSince) > o.NotRunningDeadline
}

// untilDeadline is how long until the first member pod that does not run
// passes the deadline; false when none is on the way there.
func untilDeadline(o Observed) (time.Duration, bool) {
	var first time.Duration
	found := false
	for _, m := range o.Members {
		p, ok := o.pod(m.Name)
		if !ok || p.NotRunning == "" || m.Healthy || o.NotRunningDeadline <= 0 || o.overDeadline(p) {
			continue
		}
		// Dead once strictly longer than the deadline.
		left := o.NotRunningDeadline - o.Now.Sub(p.NotRunningSince) + time.Millisecond
		if !found || left < first {
			first, found = left, true
		}
	}
	return first, found
}

// WhyDead says why member m counts as dead ("" when it does not), in words
// that stay the same from one pass to the next.
func WhyDead(o Observed, m Member) string {
	p, ok := o.pod(m.Name)
	switch {
	case !ok:
		return "its pod is gone"
	case p.Failed:
		return "its pod failed"
	case !m.Healthy && o.overDeadline(p):
		// The start, not the time elapsed: the Recovering condition quotes
		// this, and must not change on every pass.
		return fmt.Sprintf("its pod %s has been %s since %s, longer than the %s deadline",
			p.Name, describeNotRunning(p.NotRunning), p.NotRunningSince.UTC().Format(time.RFC3339), o.NotRunningDeadline)
	}
	return ""
}

func describeNotRunning(reason string) string {
	switch reason {
	case NotScheduled:
		return "pending on no node"
	case "Unschedulable":
		return "unschedulable"
	case ContainerExited:
		return "stopped (etcd exited)"
	case TerminatingOnNotReadyNode:
		return "terminating on a NotReady node"
	}
	return "in " + reason
}
