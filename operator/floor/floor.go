// Package floor builds the objects the reference operator creates for an
// EtcdCluster (its Services and member pods, from the same code), owned by
// nobody, so that a benchmark can create them itself with no operator and
// time the floor: what the same pods take when nothing decides anything.
package floor

import (
	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// ClientPort is the port members serve clients on.
const ClientPort = desired.ClientPort

// Services are the cluster's peer (headless) and client Services.
func Services(c *etcdv1beta2.EtcdCluster) []*corev1.Service {
	out := []*corev1.Service{desired.PeerService(c), desired.ClientService(c)}
	for _, s := range out {
		s.OwnerReferences = nil
	}
	return out
}

// BootstrapPods are the pods of members that start a new cluster together,
// as the reference's bootstrap creates them (token: the cluster's UID there,
// token here).
func BootstrapPods(c *etcdv1beta2.EtcdCluster, version, token string, names []string) []*corev1.Pod {
	initial := initialCluster(c, names)
	out := make([]*corev1.Pod, 0, len(names))
	for _, n := range names {
		out = append(out, pod(c, desired.Member{Name: n, Version: version, InitialCluster: initial, NewCluster: true, Token: token}))
	}
	return out
}

// JoiningPod is the pod of a member added to a running cluster whose
// members, the new one included, are names.
func JoiningPod(c *etcdv1beta2.EtcdCluster, version, name string, names []string) *corev1.Pod {
	return pod(c, desired.Member{Name: name, Version: version, InitialCluster: initialCluster(c, names)})
}

// initialCluster maps each member of names to its peer URL.
func initialCluster(c *etcdv1beta2.EtcdCluster, names []string) map[string]string {
	initial := make(map[string]string, len(names))
	for _, n := range names {
		initial[n] = desired.PeerURL(c, n)
	}
	return initial
}

// PeerURL is the peer URL a member of c advertises.
func PeerURL(c *etcdv1beta2.EtcdCluster, member string) string { return desired.PeerURL(c, member) }

// ClientURL is the client URL a member of c advertises.
func ClientURL(c *etcdv1beta2.EtcdCluster, member string) string {
	return desired.ClientURL(c, member)
}

// Selector matches the member pods of c.
func Selector(c *etcdv1beta2.EtcdCluster) map[string]string { return desired.Selector(c.Name) }

func pod(c *etcdv1beta2.EtcdCluster, m desired.Member) *corev1.Pod {
	p := desired.MemberPod(c, m, desired.Unsafe{})
	p.OwnerReferences = nil
	return p
}

// ClientServiceName is the Service clients of c use.
func ClientServiceName(c *etcdv1beta2.EtcdCluster) string { return desired.ClientServiceName(c.Name) }
