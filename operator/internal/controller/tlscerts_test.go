package controller_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// Secret names of coreos' example/tls/example-tls-cluster.yaml.
const (
	peerSecret     = "etcd-peer-tls"
	serverSecret   = "etcd-server-tls"
	operatorSecret = "etcd-client-tls"
)

// testCA issues the certificates of a TLS cluster, made afresh for each
// test (none is checked in).
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "etcdproof test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// issue returns a certificate and key (PEM) for cn, naming dns and ips, for
// the given uses.
func (ca *testCA) issue(t *testing.T, cn string, dns []string, ips []net.IP, usage ...x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key := newKey(t)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dns,
		IPAddresses:  ips,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// tlsSecrets are the three Secrets of cluster in ns, with the names and
// keys of coreos' example and the SANs its docs ask for. The peer
// certificate also names 127.0.0.1: etcd checks a peer's client
// certificate against the address the connection comes from, which a real
// cluster's reverse DNS maps to the pod's name, and the test members dial
// each other from 127.0.0.1.
func tlsSecrets(t *testing.T, ca *testCA, ns, cluster string) map[string]*corev1.Secret {
	t.Helper()
	members := fmt.Sprintf("*.%s.%s.svc", cluster, ns)
	peerCrt, peerKey := ca.issue(t, "etcd peer", []string{members, members + ".cluster.local"}, []net.IP{net.IPv4(127, 0, 0, 1)},
		x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	serverCrt, serverKey := ca.issue(t, "etcd server", []string{members, fmt.Sprintf("%s-client.%s.svc", cluster, ns), "localhost"}, nil,
		x509.ExtKeyUsageServerAuth)
	clientCrt, clientKey := ca.issue(t, "etcd client", nil, nil, x509.ExtKeyUsageClientAuth)
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
	}
	return map[string]*corev1.Secret{
		peerSecret: secret(peerSecret, map[string][]byte{
			desired.PeerCertFile: peerCrt, desired.PeerKeyFile: peerKey, desired.PeerCAFile: ca.certPEM}),
		serverSecret: secret(serverSecret, map[string][]byte{
			desired.ServerCertFile: serverCrt, desired.ServerKeyFile: serverKey, desired.ServerCAFile: ca.certPEM}),
		operatorSecret: secret(operatorSecret, map[string][]byte{
			desired.OperatorCertFile: clientCrt, desired.OperatorKeyFile: clientKey, desired.OperatorCAFile: ca.certPEM}),
	}
}

// createSecrets creates the named ones of secrets.
func createSecrets(t *testing.T, secrets map[string]*corev1.Secret, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := k8s.Create(context.Background(), secrets[name].DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
}

// withStaticTLS gives c coreos' example TLS policy.
func withStaticTLS(c *etcdv1beta2.EtcdCluster) {
	c.Spec.TLS = &etcdv1beta2.TLSPolicy{Static: &etcdv1beta2.StaticTLS{
		Member:         &etcdv1beta2.MemberSecret{PeerSecret: peerSecret, ServerSecret: serverSecret},
		OperatorSecret: operatorSecret,
	}}
}

// testClientTLS is how the tests reach c's members: nil without client TLS,
// else the operatorSecret's certificate, built with crypto/tls alone (not
// with the operator's code).
func testClientTLS(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*tls.Config, error) {
	if !c.Spec.TLS.IsSecureClient() {
		return nil, nil
	}
	var s corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.TLS.Static.OperatorSecret}, &s); err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(s.Data["etcd-client.crt"], s.Data["etcd-client.key"])
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.Data["etcd-client-ca.crt"])
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// testEndpoint is the client URL tests reach member pod p at: its pod IP,
// or with client TLS its DNS name (which the test DNS resolves, see
// memberDNS), so the member's certificate is checked against the name its
// clients use, as coreos' users reach a TLS cluster.
func testEndpoint(c *etcdv1beta2.EtcdCluster, p corev1.Pod) string {
	if c.Spec.TLS.IsSecureClient() {
		return desired.ClientURL(c, p.Name)
	}
	return fmt.Sprintf("http://%s:%d", p.Status.PodIP, desired.ClientPort)
}
