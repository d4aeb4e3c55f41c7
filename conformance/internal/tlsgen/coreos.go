package tlsgen

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// The Secret keys of coreos etcd-operator v0.9.4's static TLS
// (doc/user/cluster_tls.md): a member's peer and server Secrets, and the
// operator's client Secret, whose keys are etcdctl's --cert, --key and
// --cacert.
const (
	PeerCertKey   = "peer.crt"
	PeerKeyKey    = "peer.key"
	PeerCAKey     = "peer-ca.crt"
	ServerCertKey = "server.crt"
	ServerKeyKey  = "server.key"
	ServerCAKey   = "server-ca.crt"
	ClientCertKey = "etcd-client.crt"
	ClientKeyKey  = "etcd-client.key"
	ClientCAKey   = "etcd-client-ca.crt"
)

// clusterDomain is the cluster DNS domain of kind (and most) clusters.
const clusterDomain = "cluster.local"

// ClusterCerts are one cluster's certificates, all signed by one CA.
type ClusterCerts struct {
	CAPEM  []byte
	Peer   Pair
	Server Pair
	Client Pair
}

// ServerHosts are the names a member's client port answers to: coreos'
// member names (<pod>.<cluster>.<ns>.svc) and client Service, with and
// without the cluster domain, and localhost and 127.0.0.1, which the suite
// dials through its port-forwards.
func ServerHosts(cluster, namespace string) []string {
	return []string{
		fmt.Sprintf("*.%s.%s.svc", cluster, namespace),
		fmt.Sprintf("*.%s.%s.svc.%s", cluster, namespace, clusterDomain),
		fmt.Sprintf("%s-client.%s.svc", cluster, namespace),
		fmt.Sprintf("%s-client.%s.svc.%s", cluster, namespace, clusterDomain),
		cluster + "-client",
		"localhost",
		"127.0.0.1",
	}
}

// PeerHosts are the names members reach one another by. etcd also checks
// a peer's client certificate against the peer's address, by reverse DNS,
// which gives the name with the cluster domain: hence both.
func PeerHosts(cluster, namespace string) []string {
	return []string{
		fmt.Sprintf("*.%s.%s.svc", cluster, namespace),
		fmt.Sprintf("*.%s.%s.svc.%s", cluster, namespace, clusterDomain),
	}
}

// IssueCoreosCluster issues the certificates of one cluster:
//   - peer: server and client auth, for the members' traffic both ways;
//   - server: server auth, and client auth too, because etcd's own
//     gRPC gateway dials its client port with this certificate, which
//     --client-cert-auth then verifies as a client's;
//   - client (the operator's and the suite's): client auth and no subject
//     alternative name, because etcd checks a client certificate that has
//     names against the address it comes from, and clients come from
//     anywhere (a port-forward, the traffic pod, the operator).
func (ca *CA) IssueCoreosCluster(cluster, namespace string) (ClusterCerts, error) {
	server := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	peer, err := ca.Issue("etcd peer", PeerHosts(cluster, namespace), server...)
	if err != nil {
		return ClusterCerts{}, err
	}
	srv, err := ca.Issue("etcd server", ServerHosts(cluster, namespace), server...)
	if err != nil {
		return ClusterCerts{}, err
	}
	client, err := ca.Issue("etcdproof client", nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return ClusterCerts{}, err
	}
	return ClusterCerts{CAPEM: ca.CertPEM, Peer: peer, Server: srv, Client: client}, nil
}

// PeerSecretData is the data of member.peerSecret.
func (c ClusterCerts) PeerSecretData() map[string][]byte {
	return map[string][]byte{PeerCertKey: c.Peer.CertPEM, PeerKeyKey: c.Peer.KeyPEM, PeerCAKey: c.CAPEM}
}

// ServerSecretData is the data of member.serverSecret; its CA is the one
// client certificates must chain to.
func (c ClusterCerts) ServerSecretData() map[string][]byte {
	return map[string][]byte{ServerCertKey: c.Server.CertPEM, ServerKeyKey: c.Server.KeyPEM, ServerCAKey: c.CAPEM}
}

// ClientSecretData is the data of operatorSecret; its CA is the one the
// members' server certificates must chain to.
func (c ClusterCerts) ClientSecretData() map[string][]byte {
	return map[string][]byte{ClientCertKey: c.Client.CertPEM, ClientKeyKey: c.Client.KeyPEM, ClientCAKey: c.CAPEM}
}

// ClientTLS is the client side of the cluster's TLS: the client
// certificate, and the CA as the only root.
func (c ClusterCerts) ClientTLS() (*tls.Config, error) {
	return ClientTLS(c.Client, c.CAPEM)
}

// ClientTLS is a client configuration that presents pair and trusts only
// caPEM. The server name is left to the dialer (the host it dials).
func ClientTLS(pair Pair, caPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("CA certificate: no PEM certificate in it")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}
