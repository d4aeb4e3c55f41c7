package controller

import (
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
)

// updateMetrics sets the cluster's member gauges from the status computed
// for this pass (see computeStatus): ready counts the healthy voters,
// unready every other member, or every pod while membership is unknown.
func updateMetrics(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus) {
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "ready").Set(float64(len(st.Members.Ready)))
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "unready").Set(float64(len(st.Members.Unready)))
}
