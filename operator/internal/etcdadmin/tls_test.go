package etcdadmin_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *ca {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (c *ca) issue(t *testing.T, dns []string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// handshake runs a TLS handshake between client and a server presenting
// serverCert that requires a client certificate signed by clientCA, dialed
// by IP (as the operator dials members); it returns the client's error.
func handshake(t *testing.T, client *tls.Config, serverCert tls.Certificate, clientCA *ca) error {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(clientCA.cert)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverCert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		if conn, err := l.Accept(); err == nil {
			_ = conn.(*tls.Conn).Handshake()
			_ = conn.Close()
		}
	}()
	raw, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg := client.Clone()
	cfg.ServerName = "127.0.0.1" // what gRPC sets: the address dialed
	conn := tls.Client(raw, cfg)
	defer func() { _ = conn.Close() }()
	if err := conn.Handshake(); err != nil {
		return err
	}
	// The server's verdict on the client certificate arrives with the first
	// read: an alert, or the end of a connection it accepted.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// TestClientTLS: the operator's client configuration accepts a member
// dialed by IP whose certificate is signed by the operatorSecret's CA and
// names the cluster's members (*.<cluster>.<namespace>.svc), presents its
// own certificate, and refuses a certificate of another CA, for other
// names, or not for server use.
func TestClientTLS(t *testing.T) {
	members, other := newCA(t), newCA(t)
	clientCrt, clientKey := members.issue(t, nil, x509.ExtKeyUsageClientAuth)
	cfg, err := etcdadmin.ClientTLS(clientCrt, clientKey, members.pem, "example.example.ns1.svc")
	if err != nil {
		t.Fatal(err)
	}
	server := func(c *ca, dns []string, usage x509.ExtKeyUsage) tls.Certificate {
		crt, key := c.issue(t, dns, usage)
		pair, err := tls.X509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		return pair
	}
	wildcard := []string{"*.example.ns1.svc", "example-client.ns1.svc", "localhost"}
	if err := handshake(t, cfg, server(members, wildcard, x509.ExtKeyUsageServerAuth), members); err != nil {
		t.Errorf("member with coreos' server certificate refused: %v", err)
	}
	for name, cert := range map[string]tls.Certificate{
		"another CA":         server(other, wildcard, x509.ExtKeyUsageServerAuth),
		"another cluster":    server(members, []string{"*.other.ns1.svc"}, x509.ExtKeyUsageServerAuth),
		"not for server use": server(members, wildcard, x509.ExtKeyUsageClientAuth),
	} {
		if err := handshake(t, cfg, cert, members); err == nil {
			t.Errorf("member with a certificate of %s accepted", name)
		}
	}
	noCert := cfg.Clone()
	noCert.Certificates = nil
	if err := handshake(t, noCert, server(members, wildcard, x509.ExtKeyUsageServerAuth), members); err == nil {
		t.Error("the check accepts a client without a certificate: it proves nothing about the one presented")
	}
	if _, err := etcdadmin.ClientTLS(clientCrt, clientKey, []byte("not PEM"), "x"); err == nil {
		t.Error("a CA that is no PEM certificate accepted")
	}
	if _, err := etcdadmin.ClientTLS(clientCrt, members.pem, members.pem, "x"); err == nil {
		t.Error("a key that is no key accepted")
	}
}
