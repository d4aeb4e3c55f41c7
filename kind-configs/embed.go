// Package kindconfigs holds what every etcdproof kind cluster is made with
// beyond kind's defaults: the API server's audit policy (the rbac check reads
// its log) and the kube-router pod network of offline clusters. They are
// embedded so that `etcdproof run --cluster create` needs no checkout; the
// cluster configs themselves are Go structs in conformance/cluster.
package kindconfigs

import _ "embed"

// AuditPolicy is the API server's audit policy: every request at Metadata level.
//
//go:embed audit-policy.yaml
var AuditPolicy []byte

// KubeRouter is the kube-router DaemonSet and its RBAC; conformance/cluster
// sets its image.
//
//go:embed kube-router.yaml
var KubeRouter []byte
