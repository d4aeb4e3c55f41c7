package desired

import (
	"strconv"

	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// AnnotationBudgetVoters, on a cluster's PodDisruptionBudget, is the number
// of voters its minAvailable was counted from: while no member answers, the
// operator counts from it again (a changed budget is put back) rather than
// from spec.size.
const AnnotationBudgetVoters = "etcd.database.coreos.com/voters"

// BudgetVoters reads AnnotationBudgetVoters; 0 when it is missing or not a count.
func BudgetVoters(annotations map[string]string) int {
	n, err := strconv.Atoi(annotations[AnnotationBudgetVoters])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// DisruptionBudgetName is the PodDisruptionBudget of a cluster: named like the cluster.
func DisruptionBudgetName(cluster string) string { return cluster }

// DisruptionBudget lets voluntary disruptions (node drains, evictions) take
// at most one voter's pod of the cluster at a time, and never one that would
// leave fewer than a quorum of the voters etcd lists: minAvailable is
// MinAvailableVoters(voters), recomputed from etcd's membership every pass.
// A count taken from spec.size (maxUnavailable 1 against the scale
// subresource, as before) is wrong whenever the voters differ from it:
// during a scale-down 5→3 three evictions were allowed at once, and during
// a roll at size 3, with a fourth voter for a moment, two. voters ≤ 0
// (membership unknown) counts spec.size.
//
// It counts voters only (LabelVoter): a learner's pod must never stand in
// for a voter's. Readiness alone did not keep them apart in the drain check
// (etcd 3.6.16 on Kubernetes 1.34): the replacement learner's pod was Ready
// for a moment, never promoted, while /readyz is meant to fail on every
// learner; the budget then allowed one more eviction, one voter of the
// remaining two was evicted and the cluster lost its quorum for good. Pods
// without the label (learners, and voters for the moment before the
// operator labels them) count as unavailable, which only makes the budget
// stricter.
func DisruptionBudget(c *etcdv1beta2.EtcdCluster, voters int) *policyv1.PodDisruptionBudget {
	if voters <= 0 {
		voters = c.Spec.Size
	}
	minAvailable := intstr.FromInt32(MinAvailableVoters(voters))
	meta := objectMeta(c, DisruptionBudgetName(c.Name))
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[AnnotationBudgetVoters] = strconv.Itoa(voters)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: meta,
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: VoterSelector(c.Name)},
		},
	}
}

// MinAvailableVoters is how many of voters must stay ready for an eviction
// to be allowed: all but one, and never fewer than a quorum. With one or
// two voters that is all of them: losing one loses the quorum (a drain then
// waits until the cluster is scaled, which is the point).
func MinAvailableVoters(voters int) int32 {
	return int32(max(voters-1, voters/2+1))
}

// DisruptionBudgetV1beta1 is DisruptionBudget in policy/v1beta1, for API
// servers older than Kubernetes 1.21, which do not serve policy/v1.
func DisruptionBudgetV1beta1(c *etcdv1beta2.EtcdCluster, voters int) *policyv1beta1.PodDisruptionBudget {
	v1 := DisruptionBudget(c, voters)
	return &policyv1beta1.PodDisruptionBudget{
		ObjectMeta: v1.ObjectMeta,
		Spec:       policyv1beta1.PodDisruptionBudgetSpec{MinAvailable: v1.Spec.MinAvailable, Selector: v1.Spec.Selector},
	}
}
