package desired

import (
	corev1 "k8s.io/api/core/v1"
)

// Lost-node tolerations.
//
// When a node stops reporting, the node controller taints it
// node.kubernetes.io/unreachable (or not-ready) NoExecute and deletes every
// pod on it whose toleration of that taint runs out, all at once, without
// asking whether the pod's etcd still answers or how many members that
// leaves. A deleted pod's emptyDir goes with it as soon as its kubelet
// hears of the deletion. So with a 30 s toleration, kubelets cut off from
// the API server for 80 s on two of three nodes (etcd between the nodes
// fine) had both members deleted at once: once the kubelets were back, they
// killed both, and the cluster on emptyDir lost its quorum and its data for
// good.
//
// So member pods tolerate both taints for ever, as Kubernetes' own
// DaemonSet pods do (a pod that cannot usefully move gains nothing from
// the eviction), on emptyDir and on claims alike. Whether a member on a lost
// node is replaced is the operator's decision (plan.NodeLost): only a member
// that does not answer etcd's status call, once the not-running deadline
// has passed since the node controller marked its pod, one member at a
// time, and only while the others keep quorum. A member whose node comes
// back keeps its data and catches up.
//
// Claims were weighed apart: the eviction of a member on a claim destroys no
// data, but it gains nothing either. The evicted pod stays Terminating on
// the lost node (no kubelet confirms it); it cannot start elsewhere on a
// node-bound volume, and a network volume stays attached to the lost node
// until the pod is gone. etcd-druid (a StatefulSet) and CloudNativePG leave
// their pods Kubernetes' 300 s because there the eviction is how a lost
// instance comes back: its pod is made again on another node, on the same
// claim, once the old one is gone (their failover does not wait for it).
// This operator replaces a lost member with a new one and a new claim,
// which does not wait for the eviction either. All a finite toleration
// would add on claims is a restart of healthy members whose kubelet was cut
// off for longer than it, two at once on two nodes, and the quorum lost
// while they restart.
//
// A node really gone is deleted by its cloud controller or a person; the
// pod garbage collector then deletes its pods whatever they tolerate, and
// the node.kubernetes.io/out-of-service taint (non-graceful node shutdown)
// is not tolerated.
var lostNodeTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// Tolerations are the member pod's tolerations: the user's
// (spec.pod.tolerations), plus a toleration for ever of each lost-node taint
// the user's do not already tolerate. The user's choice wins, matched as the
// DefaultTolerationSeconds admission plugin matches it (the taint's key or
// an empty key, effect NoExecute or empty): a toleration with seconds there
// is the user's deliberate choice.
//
// They are not part of the pod policy hash (PodPolicyHash reads the spec as
// written): an operator upgrade rolls no member for them. Running members
// made with a lost-node toleration that runs out get it changed in place
// instead (LostNodeTolerationsForEver).
func Tolerations(user []corev1.Toleration) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), user...)
	for _, key := range lostNodeTaints {
		if toleratesLostNode(user, key) {
			continue
		}
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	}
	return out
}

// LostNodeTolerationsForEver returns a running member pod's tolerations with
// each lost-node toleration that runs out made to last for ever, unless the
// user's (spec.pod.tolerations) tolerate that taint themselves, and whether
// anything changed. Such tolerations are what older operators gave their
// pods (30 s) or what the DefaultTolerationSeconds admission plugin added to
// them (300 s). The API server allows changing a toleration's seconds on a
// running pod, and the node controller takes the change into account at
// once, so no member is restarted for it.
func LostNodeTolerationsForEver(pod, user []corev1.Toleration) ([]corev1.Toleration, bool) {
	out := append([]corev1.Toleration(nil), pod...)
	changed := false
	for i, t := range out {
		if t.TolerationSeconds == nil || t.Operator != corev1.TolerationOpExists || t.Effect != corev1.TaintEffectNoExecute ||
			!isLostNodeTaint(t.Key) || toleratesLostNode(user, t.Key) {
			continue
		}
		out[i].TolerationSeconds = nil
		changed = true
	}
	return out, changed
}

func isLostNodeTaint(key string) bool {
	for _, k := range lostNodeTaints {
		if k == key {
			return true
		}
	}
	return false
}

func toleratesLostNode(tolerations []corev1.Toleration, key string) bool {
	for _, t := range tolerations {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
