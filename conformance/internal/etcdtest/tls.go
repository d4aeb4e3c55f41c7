package etcdtest

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/etcdproof/etcdproof/internal/loopback"
)

// TLSFiles are a member's client-port certificate and key and the CA its
// clients' certificates must chain to, as PEM.
type TLSFiles struct {
	CertPEM, KeyPEM, ClientCAPEM []byte
}

// StartTLS runs one etcd member whose client port speaks only TLS and
// requires a client certificate signed by f's CA (--client-cert-auth, as
// coreos' static TLS runs members), and returns its https client URL; the
// member stops when the test ends.
func StartTLS(t *testing.T, f TLSFiles) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	cfg.LogLevel = "error"
	// Callers reach the member as the suite's port-forwards do, on
	// 127.0.0.1: its client port is bound to port 0, so the kernel picks a
	// free one at bind time (the peer URL must be known before etcd starts).
	client, peer := url.URL{Scheme: "https", Host: "127.0.0.1:0"}, loopback.URL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.ClientTLSInfo.CertFile = write("server.crt", f.CertPEM)
	cfg.ClientTLSInfo.KeyFile = write("server.key", f.KeyPEM)
	cfg.ClientTLSInfo.TrustedCAFile = write("server-ca.crt", f.ClientCAPEM)
	cfg.ClientTLSInfo.ClientCertAuth = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcd failed: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready within a minute")
	}
	return client.Scheme + "://" + e.Clients[0].Addr().String()
}
