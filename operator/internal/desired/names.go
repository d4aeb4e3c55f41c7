// Package desired builds the objects the operator wants to exist (Services,
// member Pods, PVCs, the PodDisruptionBudget) from an EtcdCluster. Pure
// functions: no client, no clock.
package desired

import (
	"fmt"
	"strings"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// Labels and annotations, as coreos etcd-operator set them so existing
// selectors keep working.
const (
	LabelApp          = "app"
	AppName           = "etcd"
	LabelCluster      = "etcd_cluster"
	LabelNode         = "etcd_node"
	AnnotationVersion = "etcd.version"
	// AnnotationPodPolicy records the pod policy a member pod was made with
	// (PodPolicyHash), so a changed policy is rolled out member by member.
	AnnotationPodPolicy = "etcd.database.coreos.com/pod-policy-hash"
	// AnnotationImageNotPulled records, on a member pod brought back on its
	// previous version, the image of spec.version it could not pull.
	AnnotationImageNotPulled = "etcd.database.coreos.com/image-not-pulled"
	// AnnotationImageUnhealthy records, on a member pod brought back on its
	// previous version, the image of spec.version it did not become healthy on.
	AnnotationImageUnhealthy = "etcd.database.coreos.com/image-unhealthy"
	// LabelVoter marks a member pod whose member etcd lists as a voter
	// (VoterLabelValue). The operator sets it from etcd's membership, never
	// at pod creation: the PodDisruptionBudget selects on it (see
	// DisruptionBudget).
	LabelVoter      = "etcd.database.coreos.com/voter"
	VoterLabelValue = "true"
)

// Ports and paths inside a member pod.
const (
	ClientPort    = 2379
	PeerPort      = 2380
	DataDir       = "/var/etcd/data"
	DataVolume    = "etcd-data"
	EtcdBinary    = "/usr/local/bin/etcd"
	ContainerName = "etcd"
)

// Selector matches every member pod of the cluster.
func Selector(cluster string) map[string]string {
	return map[string]string{LabelApp: AppName, LabelCluster: cluster}
}

// VoterSelector matches the member pods of the cluster whose members are
// voters.
func VoterSelector(cluster string) map[string]string {
	s := Selector(cluster)
	s[LabelVoter] = VoterLabelValue
	return s
}

// PeerServiceName is the headless Service giving each member a DNS name.
func PeerServiceName(cluster string) string { return cluster }

// ClientServiceName is the Service clients connect to.
func ClientServiceName(cluster string) string { return cluster + "-client" }

// Image is <repository>:v<version>, the coreos convention.
func Image(c *etcdv1beta2.EtcdCluster, version string) string {
	return ImageOf(Repository(c), version)
}

// ImageOf is <repository>:v<version>.
func ImageOf(repository, version string) string {
	return fmt.Sprintf("%s:v%s", repository, version)
}

// Repository is spec.repository or the default.
func Repository(c *etcdv1beta2.EtcdCluster) string {
	if c.Spec.Repository == "" {
		return etcdv1beta2.DefaultRepository
	}
	return c.Spec.Repository
}

// MemberHost is the stable DNS name of a member through the headless Service.
func MemberHost(member, cluster, namespace string) string {
	return fmt.Sprintf("%s.%s.%s.svc", member, PeerServiceName(cluster), namespace)
}

// PeerURL is the member's advertised peer URL: https with peer TLS.
func PeerURL(c *etcdv1beta2.EtcdCluster, member string) string {
	return fmt.Sprintf("%s://%s:%d", PeerScheme(c), MemberHost(member, c.Name, c.Namespace), PeerPort)
}

// ClientURL is the member's advertised client URL: https with client TLS.
func ClientURL(c *etcdv1beta2.EtcdCluster, member string) string {
	return fmt.Sprintf("%s://%s:%d", ClientScheme(c), MemberHost(member, c.Name, c.Namespace), ClientPort)
}

// MemberNameFromPeerURL recovers the pod name from a peer URL built by PeerURL;
// a member that has not started yet has no name in etcd's member list.
func MemberNameFromPeerURL(peerURL string) string {
	host := strings.TrimPrefix(strings.TrimPrefix(peerURL, "http://"), "https://")
	if i := strings.IndexAny(host, ".:/"); i >= 0 {
		host = host[:i]
	}
	return host
}

// NewMemberName is <cluster>-<suffix>; suffix comes from the caller's random source.
func NewMemberName(cluster, suffix string) string {
	return cluster + "-" + suffix
}
