package desired

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// Static TLS (spec.TLS.static): where member pods mount the Secrets and the
// file names in them, coreos etcd-operator v0.9.4's, so its users' Secrets
// work unchanged.
const (
	PeerTLSDir      = "/etc/etcdtls/member/peer-tls"
	PeerTLSVolume   = "member-peer-tls"
	ServerTLSDir    = "/etc/etcdtls/member/server-tls"
	ServerTLSVolume = "member-server-tls"
	// OperatorTLSDir is where a seeded member's init container mounts the
	// operatorSecret to reach the survivor (coreos mounted it there in every
	// member, for its etcdctl probe; the probes here need none).
	OperatorTLSDir    = "/etc/etcdtls/operator/etcd-tls"
	OperatorTLSVolume = "etcd-client-tls"

	PeerCertFile   = "peer.crt"
	PeerKeyFile    = "peer.key"
	PeerCAFile     = "peer-ca.crt"
	ServerCertFile = "server.crt"
	ServerKeyFile  = "server.key"
	ServerCAFile   = "server-ca.crt"
	// The operatorSecret's keys, those of an EtcdBackup's clientTLSSecret.
	OperatorCertFile = backup.EtcdClientCertFile
	OperatorKeyFile  = backup.EtcdClientKeyFile
	OperatorCAFile   = backup.EtcdClientCAFile
)

// PeerScheme is https when members talk to each other over TLS.
func PeerScheme(c *etcdv1beta2.EtcdCluster) string {
	if c.Spec.TLS.IsSecurePeer() {
		return "https"
	}
	return "http"
}

// ClientScheme is https when members serve clients over TLS only.
func ClientScheme(c *etcdv1beta2.EtcdCluster) string {
	if c.Spec.TLS.IsSecureClient() {
		return "https"
	}
	return "http"
}

// ServerName is the name the operator checks the members' server
// certificate against. It dials members by pod IP, which coreos' server
// certificates do not name: they name *.<cluster>.<namespace>.svc, the
// members' DNS names, which coreos' operator dialed. Every member serves the
// one serverSecret, so any name under that wildcard checks the same
// certificate; this one has the cluster's name as its first label.
func ServerName(c *etcdv1beta2.EtcdCluster) string {
	return MemberHost(c.Name, c.Name, c.Namespace)
}

// tlsFlags are the etcd flags of the member's certificates, as coreos gave
// them: peers and clients must present a certificate signed by the CA.
func tlsFlags(c *etcdv1beta2.EtcdCluster) []string {
	var flags []string
	if c.Spec.TLS.IsSecurePeer() {
		flags = append(flags,
			"--peer-client-cert-auth=true",
			fmt.Sprintf("--peer-trusted-ca-file=%s/%s", PeerTLSDir, PeerCAFile),
			fmt.Sprintf("--peer-cert-file=%s/%s", PeerTLSDir, PeerCertFile),
			fmt.Sprintf("--peer-key-file=%s/%s", PeerTLSDir, PeerKeyFile))
	}
	if c.Spec.TLS.IsSecureClient() {
		flags = append(flags,
			"--client-cert-auth=true",
			fmt.Sprintf("--trusted-ca-file=%s/%s", ServerTLSDir, ServerCAFile),
			fmt.Sprintf("--cert-file=%s/%s", ServerTLSDir, ServerCertFile),
			fmt.Sprintf("--key-file=%s/%s", ServerTLSDir, ServerKeyFile))
	}
	return flags
}

// tlsVolumes are the member's certificate Secrets and the etcd container's
// mounts of them.
func tlsVolumes(c *etcdv1beta2.EtcdCluster) ([]corev1.Volume, []corev1.VolumeMount) {
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(name, secret, dir string) {
		volumes = append(volumes, secretVolume(name, secret))
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true})
	}
	if c.Spec.TLS.IsSecurePeer() {
		add(PeerTLSVolume, c.Spec.TLS.Static.Member.PeerSecret, PeerTLSDir)
	}
	if c.Spec.TLS.IsSecureClient() {
		add(ServerTLSVolume, c.Spec.TLS.Static.Member.ServerSecret, ServerTLSDir)
	}
	return volumes, mounts
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}
