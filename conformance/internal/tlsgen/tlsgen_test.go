package tlsgen

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
)

func parse(t *testing.T, what string, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s: no PEM certificate", what)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return cert
}

// verify checks cert chains to the CA for usage, as the name (when given)
// that a dialer would ask for.
func verify(t *testing.T, ca []byte, cert *x509.Certificate, name string, usage x509.ExtKeyUsage) error {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("CA PEM holds no certificate")
	}
	_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

// Every name coreos documents for a member's client port, and those the
// suite dials, verify against the CA as a server; the members' peer
// certificates verify both as servers and as clients; the client
// certificate verifies as a client and names nothing.
func TestCoreosClusterCertificatesVerifyForEveryName(t *testing.T) {
	ca, err := NewCA("etcdproof test CA")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := ca.IssueCoreosCluster("demo", "ns1")
	if err != nil {
		t.Fatal(err)
	}
	server, peer, client := parse(t, "server", cc.Server.CertPEM), parse(t, "peer", cc.Peer.CertPEM), parse(t, "client", cc.Client.CertPEM)

	for _, name := range []string{
		"demo-abc123.demo.ns1.svc", "demo-abc123.demo.ns1.svc.cluster.local",
		"demo-client.ns1.svc", "demo-client.ns1.svc.cluster.local", "demo-client",
		"localhost", "127.0.0.1",
	} {
		if err := verify(t, cc.CAPEM, server, name, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	// etcd's gRPC gateway presents the server certificate as a client.
	if err := verify(t, cc.CAPEM, server, "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("server certificate as a client: %v", err)
	}
	for _, name := range []string{"other-client.ns1.svc", "demo-abc123.demo.ns2.svc", "10.0.0.1"} {
		if verify(t, cc.CAPEM, server, name, x509.ExtKeyUsageServerAuth) == nil {
			t.Errorf("server certificate verified for %s, which it must not name", name)
		}
	}

	for _, name := range []string{"demo-abc123.demo.ns1.svc", "demo-abc123.demo.ns1.svc.cluster.local"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if err := verify(t, cc.CAPEM, peer, name, usage); err != nil {
				t.Errorf("peer certificate for %s, usage %v: %v", name, usage, err)
			}
		}
	}

	if err := verify(t, cc.CAPEM, client, "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if verify(t, cc.CAPEM, client, "", x509.ExtKeyUsageServerAuth) == nil {
		t.Error("client certificate verified as a server")
	}
	// etcd would check names against the client's address, which is
	// anywhere: a port-forward, the traffic pod, the operator.
	if len(client.DNSNames)+len(client.IPAddresses) > 0 {
		t.Errorf("client certificate names %v %v, want no subject alternative name", client.DNSNames, client.IPAddresses)
	}

	wantUsages := map[string][]x509.ExtKeyUsage{
		"server": {x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		"peer":   {x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		"client": {x509.ExtKeyUsageClientAuth},
	}
	for name, cert := range map[string]*x509.Certificate{"server": server, "peer": peer, "client": client} {
		if !slices.Equal(cert.ExtKeyUsage, wantUsages[name]) {
			t.Errorf("%s certificate usages = %v, want %v", name, cert.ExtKeyUsage, wantUsages[name])
		}
		if cert.IsCA {
			t.Errorf("%s certificate is a CA", name)
		}
	}
}

func TestAnotherCAIsNotTrusted(t *testing.T) {
	ours, err := NewCA("ours")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := NewCA("theirs")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := theirs.IssueCoreosCluster("demo", "ns1")
	if err != nil {
		t.Fatal(err)
	}
	if verify(t, ours.CertPEM, parse(t, "server", cc.Server.CertPEM), "localhost", x509.ExtKeyUsageServerAuth) == nil {
		t.Error("a certificate of another CA verified")
	}
}

// The Secrets carry coreos v0.9.4's key names, each certificate with its
// own key and the CA.
func TestSecretDataHasCoreosKeyNames(t *testing.T) {
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := ca.IssueCoreosCluster("demo", "ns1")
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		data          map[string][]byte
		cert, key, ca string
		pair          Pair
	}{
		"peer":   {cc.PeerSecretData(), "peer.crt", "peer.key", "peer-ca.crt", cc.Peer},
		"server": {cc.ServerSecretData(), "server.crt", "server.key", "server-ca.crt", cc.Server},
		"client": {cc.ClientSecretData(), "etcd-client.crt", "etcd-client.key", "etcd-client-ca.crt", cc.Client},
	} {
		if len(tt.data) != 3 || string(tt.data[tt.cert]) != string(tt.pair.CertPEM) || string(tt.data[tt.key]) != string(tt.pair.KeyPEM) || string(tt.data[tt.ca]) != string(ca.CertPEM) {
			t.Errorf("%s Secret data has keys %v, want %s, %s, %s holding its certificate, key and the CA", name, keys(tt.data), tt.cert, tt.key, tt.ca)
		}
		if !strings.Contains(string(tt.data[tt.key]), "PRIVATE KEY") {
			t.Errorf("%s key is not a PEM private key", name)
		}
	}
	if _, err := cc.ClientTLS(); err != nil {
		t.Errorf("client TLS config: %v", err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
