package desired

import (
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// DisruptionBudgetName is the PodDisruptionBudget of a cluster: named like the cluster.
func DisruptionBudgetName(cluster string) string { return cluster }

// DisruptionBudget lets voluntary disruptions (node drains, evictions) take
// at most one member pod of the cluster at a time, and none while one is
// not ready: with the plan's one-change-at-a-time rule, a drain can never
// take two members of a quorum at once.
//
// It counts voters only (LabelVoter): a learner's pod must never stand in
// for a voter's. Readiness alone did not keep them apart in the drain check
// (etcd 3.6.16 on Kubernetes 1.34): the replacement learner's pod was Ready
// for a moment, never promoted, while /readyz is meant to fail on every
// learner; the budget then allowed one more eviction, one voter of the
// remaining two was evicted and the cluster lost its quorum for good. Pods
// without the label (learners, and voters for the moment before the
// operator labels them) count as unavailable, which only makes the budget
// stricter; the disruption controller takes the expected count from the
// cluster's scale subresource.
func DisruptionBudget(c *etcdv1beta2.EtcdCluster) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(c, DisruptionBudgetName(c.Name)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &one,
			Selector:       &metav1.LabelSelector{MatchLabels: VoterSelector(c.Name)},
		},
	}
}

// DisruptionBudgetV1beta1 is DisruptionBudget in policy/v1beta1, for API
// servers older than Kubernetes 1.21, which do not serve policy/v1.
func DisruptionBudgetV1beta1(c *etcdv1beta2.EtcdCluster) *policyv1beta1.PodDisruptionBudget {
	v1 := DisruptionBudget(c)
	return &policyv1beta1.PodDisruptionBudget{
		ObjectMeta: v1.ObjectMeta,
		Spec:       policyv1beta1.PodDisruptionBudgetSpec{MaxUnavailable: v1.Spec.MaxUnavailable, Selector: v1.Spec.Selector},
	}
}
