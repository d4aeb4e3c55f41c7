// Package metrics defines the operator's own Prometheus metrics, served with
// controller-runtime's on /metrics.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// Members counts members of each cluster by state (ready, unready).
	Members = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "etcd_operator_cluster_members",
		Help: "Members of an EtcdCluster by state (ready: healthy voter; unready: anything else).",
	}, []string{"namespace", "cluster", "state"})

	// MemberUpgrades counts members moved to a new version or image.
	MemberUpgrades = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_operator_member_upgrades_total",
		Help: "Members upgraded (replaced or restarted with a new version or image).",
	}, []string{"namespace", "cluster"})

	// DeadMemberReplacements counts dead members removed so they can be replaced.
	DeadMemberReplacements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_operator_dead_member_replacements_total",
		Help: "Dead members removed from membership to be replaced by new members.",
	}, []string{"namespace", "cluster"})

	// MembershipChanges counts membership changes by kind (add, promote, remove).
	MembershipChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_operator_membership_changes_total",
		Help: "etcd membership changes made by the operator, by kind.",
	}, []string{"namespace", "cluster", "change"})
)

func init() {
	metrics.Registry.MustRegister(Members, MemberUpgrades, DeadMemberReplacements, MembershipChanges)
}

// Forget drops the series of a deleted cluster.
func Forget(namespace, cluster string) {
	labels := prometheus.Labels{"namespace": namespace, "cluster": cluster}
	Members.DeletePartialMatch(labels)
	MemberUpgrades.DeletePartialMatch(labels)
	DeadMemberReplacements.DeletePartialMatch(labels)
	MembershipChanges.DeletePartialMatch(labels)
}
