package plan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// DefaultNotRunningDeadline is how long a member pod may stay in a state
// that does not run etcd (see NotRunning) before its member counts as dead.
// For a pod terminating on a working node it is the margin past its grace
// period (see TerminatingPastGrace).
const DefaultNotRunningDeadline = 60 * time.Second

// DefaultCreatingDeadline is how long a member pod may stay being created
// (see Creating) before its member counts as dead. The slowest start that
// is not stuck: a claim's volume still attached to a lost node is detached
// by force by the attach/detach controller after 6 minutes, then attached
// to the new node (a minute or two); an etcd image (under 100 MB) pulls in
// about a minute even at 1 MB/s. Past 10 minutes the pod waits on something
// that does not come by itself (a Secret or claim that does not exist, a
// network plugin that fails).
const DefaultCreatingDeadline = 10 * time.Minute

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
	// TerminatingPastGrace: the pod is being deleted on a node that works
	// and is still there, since its grace period ended (a finalizer nobody
	// removes, a container or volume its kubelet cannot stop or unmount).
	TerminatingPastGrace = "TerminatingPastGrace"
	// Creating: the pod is on a node, but its containers are not created
	// yet (sandbox, volumes or network not ready, or the image being pulled).
	// It counts against CreatingDeadline, not NotRunningDeadline.
	Creating = "Creating"
	// NodeLost: the pod's node stopped reporting (the node controller marked
	// the pod not Ready). Its etcd may well run: the operator still asks it
	// (see MayAnswer), and its member counts as dead only if it does not
	// answer. Member pods tolerate the node controller's taints for ever
	// (desired.Tolerations), so this, not the eviction, is what replaces a
	// member on a node that is really gone.
	NodeLost = "NodeLost"
)

// MayAnswer: the operator asks pod p's member for its status. A pod that
// does not run etcd keeps its IP (CrashLoopBackOff, ImagePullBackOff), and
// asking it would only hold calls until they time out; but on a lost node
// only the kubelet is known to be out of reach, not etcd.
func MayAnswer(p Pod) bool {
	return p.NotRunning == "" || p.NotRunning == NodeLost
}

// startingReasons are the container waiting reasons of a pod that is on its
// way: image pulls and volume mounts can take long without anything being
// wrong, so only the creating deadline makes such a member dead (see Creating).
var startingReasons = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// readyToStartContainers are the names of the kubelet's pod condition that
// turns True once the pod's sandbox (volumes mounted, network set up) is
// ready: PodReadyToStartContainers from Kubernetes 1.29 on, PodHasNetwork
// before (1.25–1.28, behind a feature gate).
var readyToStartContainers = []corev1.PodConditionType{"PodReadyToStartContainers", "PodHasNetwork"}

// NotRunning says whether a member pod is in a state that does not run etcd
// and will not change by itself, and since when. It reads only the pod's own
// status (condition transition times, set by the scheduler, the kubelet and
// the node controller), so an operator that restarts keeps the clock.
//
// Not covered (reason ""): a pod that runs on a node that reports, ready
// or not (a startup probe still within its window, a member catching up:
// see learnerDeadline for learners); a pod whose init container runs (a
// seed copying data); a failed pod (Pod.Failed says so already). A pod
// still being created is Creating, which has its own, longer deadline; a
// pod terminating on a node that works is TerminatingPastGrace from the end
// of its grace period (its kubelet stops it within it); a pod on a node that
// stopped reporting is NodeLost, though its etcd may run.
func NotRunning(p *corev1.Pod) (reason string, since time.Time) {
	if p.DeletionTimestamp != nil {
		if reason, since := terminatingOnLostNode(p); reason != "" {
			return reason, since
		}
		// The deletion timestamp is when the grace period ends.
		return TerminatingPastGrace, p.DeletionTimestamp.Time
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return "", time.Time{}
	}
	if lost, ok := nodeLostSince(p); ok {
		return NodeLost, lost
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
	switch {
	case st != nil && st.State.Running != nil:
		return "", time.Time{}
	case st != nil && st.State.Waiting != nil && !startingReasons[st.State.Waiting.Reason]:
		reason = st.State.Waiting.Reason
	case st != nil && st.State.Terminated != nil:
		reason = ContainerExited
	default:
		return creating(p, st)
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

// nodeLostSince recognises a pod whose node is NotReady, and since when:
// the node controller then marks the pod not Ready and leaves every other
// condition as the absent kubelet last reported it, so Ready is False while
// ContainersReady is still True, which a kubelet never reports for a pod
// without readiness gates (member pods have none).
func nodeLostSince(p *corev1.Pod) (time.Time, bool) {
	ready, containers := condition(p, corev1.PodReady), condition(p, corev1.ContainersReady)
	if ready == nil || containers == nil || ready.Status != corev1.ConditionFalse || containers.Status != corev1.ConditionTrue {
		return time.Time{}, false
	}
	return ready.LastTransitionTime.Time, true
}

// terminatingOnLostNode recognises a pod being deleted on a NotReady node
// (nodeLostSince). The clock starts when both hold: the deletion was
// requested and the node was lost.
func terminatingOnLostNode(p *corev1.Pod) (string, time.Time) {
	since, lost := nodeLostSince(p)
	if !lost {
		return "", time.Time{}
	}
	requested := p.DeletionTimestamp.Time
	if g := p.DeletionGracePeriodSeconds; g != nil {
		requested = requested.Add(-time.Duration(*g) * time.Second)
	}
	if requested.After(since) {
		since = requested
	}
	return TerminatingOnNotReadyNode, since
}

// creating recognises a pod on a node whose etcd container is not created
// yet, since when: its sandbox is not ready (the kubelet's
// PodReadyToStartContainers condition False: volumes that do not attach or
// mount, a network plugin that fails), since that condition's transition;
// or its etcd container waits in ContainerCreating (an image pull, or the
// above where the kubelet reports no sandbox condition, before 1.29), since
// the pod was scheduled or its sandbox became ready, whichever is later. A
// pod whose kubelet has not reported yet, or whose init container runs, is
// not creating.
func creating(p *corev1.Pod, st *corev1.ContainerStatus) (string, time.Time) {
	sandbox := sandboxCondition(p)
	if sandbox != nil && sandbox.Status == corev1.ConditionFalse {
		return Creating, sandbox.LastTransitionTime.Time
	}
	if st == nil || st.State.Waiting == nil || st.State.Waiting.Reason != "ContainerCreating" {
		return "", time.Time{}
	}
	since := p.CreationTimestamp.Time
	if c := condition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(since) {
		since = c.LastTransitionTime.Time
	}
	if sandbox != nil && sandbox.LastTransitionTime.After(since) {
		since = sandbox.LastTransitionTime.Time
	}
	return Creating, since
}

func sandboxCondition(p *corev1.Pod) *corev1.PodCondition {
	for _, t := range readyToStartContainers {
		if c := condition(p, t); c != nil {
			return c
		}
	}
	return nil
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

// deadline is how long pod p may stay as p.NotRunning says; 0: for ever.
func (o Observed) deadline(p Pod) time.Duration {
	if p.NotRunning == Creating {
		return o.CreatingDeadline
	}
	return o.NotRunningDeadline
}

// overDeadline reports whether pod p has not run for longer than the deadline.
func (o Observed) overDeadline(p Pod) bool {
	d := o.deadline(p)
	return p.NotRunning != "" && d > 0 && o.Now.Sub(p.NotRunningSince) > d
}

// untilDeadline is how long until the first member passes a deadline (its
// pod does not run, or it is a learner that is not promoted); false when
// none is on the way there.
func untilDeadline(o Observed) (time.Duration, bool) {
	var first time.Duration
	found := false
	next := func(left time.Duration) {
		// Dead once strictly longer than the deadline.
		left += time.Millisecond
		if !found || left < first {
			first, found = left, true
		}
	}
	for _, m := range o.Members {
		if since, ok := o.learnerSince(m); ok && !o.learnerStuck(m) {
			next(o.learnerDeadline() - o.Now.Sub(since))
		}
		p, ok := o.pod(m.Name)
		if !ok || p.NotRunning == "" || m.Healthy || o.deadline(p) <= 0 || o.overDeadline(p) {
			continue
		}
		next(o.deadline(p) - o.Now.Sub(p.NotRunningSince))
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
			p.Name, describeNotRunning(p.NotRunning), p.NotRunningSince.UTC().Format(time.RFC3339), o.deadline(p))
	case o.learnerStuck(m):
		since, _ := o.learnerSince(m)
		return fmt.Sprintf("learner %s has run since %s without being promoted, longer than the %s learner deadline: %s",
			m.Name, since.UTC().Format(time.RFC3339), o.learnerDeadline(), whyNotPromoted(m))
	}
	return ""
}

// DeadReason is the condition reason of the way member m is dead: one of
// the stuck states, else conditions.ReasonReplacingDeadMember. It follows
// WhyDead's order.
func DeadReason(o Observed, m Member) string {
	p, ok := o.pod(m.Name)
	switch {
	case !ok || p.Failed:
	case !m.Healthy && o.overDeadline(p):
		switch p.NotRunning {
		case TerminatingPastGrace:
			return conditions.ReasonPodStuckTerminating
		case Creating:
			return conditions.ReasonPodStuckCreating
		}
	case o.learnerStuck(m):
		return conditions.ReasonLearnerNotCaughtUp
	}
	return conditions.ReasonReplacingDeadMember
}

// stuckReason is DeadReason for the stuck states only, "" for the others.
func stuckReason(o Observed, m Member) string {
	if r := DeadReason(o, m); r != conditions.ReasonReplacingDeadMember {
		return r
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
	case TerminatingPastGrace:
		return "terminating past its grace period on a working node"
	case Creating:
		return "creating its containers (ContainerCreating, or its sandbox, volumes or network not ready)"
	case NodeLost:
		return "on a NotReady node"
	}
	return "in " + reason
}
