package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/internal/tlsgen"
)

// The traffic pod of a TLS cluster passes the client Secret's files as
// etcdctl's --cert, --key and --cacert: they become the clients' TLS.
func TestParseTrafficTLSFlags(t *testing.T) {
	ca, err := tlsgen.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ca.IssueCoreosCluster("c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{}
	for key, data := range certs.ClientSecretData() {
		files[key] = filepath.Join(dir, key)
		if err := os.WriteFile(files[key], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, key, cacert := files[tlsgen.ClientCertKey], files[tlsgen.ClientKeyKey], files[tlsgen.ClientCAKey]
	member := etcdtest.StartTLS(t, etcdtest.TLSFiles{CertPEM: certs.Server.CertPEM, KeyPEM: certs.Server.KeyPEM, ClientCAPEM: certs.CAPEM})

	// What the flags give reaches a member that requires the certificate.
	cfg, _, err := parseTraffic([]string{"--endpoints", member, "--cert", cert, "--key", key, "--cacert", cacert})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, TLS: cfg.TLS, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Errorf("put with the flags' TLS: %v", err)
	}

	https := []string{"--endpoints", "https://c-client.ns.svc:2379"}
	if cfg, _, err := parseTraffic(https); err != nil || cfg.TLS != nil {
		t.Errorf("no TLS flags: TLS = %v, %v; want plain", cfg.TLS, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(https, "--cert", cert, "--cacert", cacert), "--cert and --key go together"},
		{append(https, "--cert", cert, "--key", filepath.Join(dir, "missing.key")), "client TLS:"},
		{[]string{"--endpoints", "http://c-client.ns.svc:2379", "--cacert", cacert}, "is http://"},
	} {
		if _, _, err := parseTraffic(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error = %v, want %q", tc.args, err, tc.want)
		}
	}
}
