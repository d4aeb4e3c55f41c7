// Package etcdtest starts real single-member etcd servers on loopback for
// integration tests.
package etcdtest

import (
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/etcdproof/etcdproof/internal/loopback"
)

// Start runs one etcd member on free loopback ports and returns its
// client URL; the member stops when the test ends.
func Start(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "error"
	// Callers reach the member as the suite's port-forwards do, on
	// 127.0.0.1: its client port is bound to port 0, so the kernel picks a
	// free one at bind time (the peer URL must be known before etcd starts).
	client, peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}, loopback.URL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
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
