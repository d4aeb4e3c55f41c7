package desired

import (
	corev1 "k8s.io/api/core/v1"
)

// LostNodeTolerationSeconds is how long a member pod stays bound to a node
// that is NotReady or unreachable before Kubernetes evicts it (deletes it).
//
// Kubernetes' default is 300 s (the DefaultTolerationSeconds admission
// plugin), and the plan counts a member dead only once its pod is
// terminating on such a node (plan.TerminatingOnNotReadyNode) for the
// not-running deadline: with the default a lost node's member would be
// replaced only after the node controller's grace (~50 s), 300 s and the
// deadline, about 7 minutes with quorum one failure away. A member is
// cheap to replace (its data is on the other members) and an etcd member
// that is partitioned away is no member at all, so 30 s is enough to ride
// out a kubelet restart or a short network blip without replacing anyone.
const LostNodeTolerationSeconds int64 = 30

// lostNodeTaints are the NoExecute taints the node controller puts on a
// node it lost.
var lostNodeTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// Tolerations are the member pod's tolerations: the user's
// (spec.pod.tolerations), plus a LostNodeTolerationSeconds toleration of
// each lost-node taint the user's do not already tolerate. The user's
// choice wins, matched as the DefaultTolerationSeconds admission plugin
// matches it (the taint's key or an empty key, effect NoExecute or empty):
// a pod that tolerates a taint for ever keeps doing so, as an extra
// toleration with seconds would cut it short.
//
// They are not part of the pod policy hash (PodPolicyHash reads the spec as
// written): running members keep the tolerations they were made with, and
// an operator upgrade rolls no member for them.
func Tolerations(user []corev1.Toleration) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), user...)
	for _, key := range lostNodeTaints {
		if toleratesLostNode(user, key) {
			continue
		}
		seconds := LostNodeTolerationSeconds
		out = append(out, corev1.Toleration{
			Key:               key,
			Operator:          corev1.TolerationOpExists,
			Effect:            corev1.TaintEffectNoExecute,
			TolerationSeconds: &seconds,
		})
	}
	return out
}

func toleratesLostNode(tolerations []corev1.Toleration, key string) bool {
	for _, t := range tolerations {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
