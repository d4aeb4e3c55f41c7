package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// startOneMember runs a one-member etcd cluster in the test's process.
func startOneMember(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	client, peer := loopback.URL(t), loopback.URL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.ListenMetricsUrls = nil
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready within a minute")
	}
	return client.String()
}

// TestBackupSubcommand: the result line (or the error) lands in the result
// file, where the operator reads it back with backup.ParseResult, and the
// exit code says which.
func TestBackupSubcommand(t *testing.T) {
	endpoint := startOneMember(t)
	dir := t.TempDir()
	result := filepath.Join(dir, "termination-log")
	file := filepath.Join(dir, "backups", "etcd.backup")

	var stdout bytes.Buffer
	if code := runBackup([]string{"--endpoints=" + endpoint, "--file=" + file, "--result-file=" + result}, &stdout); code != 0 {
		t.Fatalf("backup exits %d; result file: %s", code, read(t, result))
	}
	res, err := backup.ParseResult(read(t, result))
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != file || res.EtcdRevision < 1 || res.EtcdVersion == "" || res.Size == 0 {
		t.Fatalf("result %+v", res)
	}
	if info, err := os.Stat(file); err != nil || info.Size() != res.Size {
		t.Fatalf("backup file: %v, %v; want %d bytes", info, err, res.Size)
	}
	if strings.TrimSpace(stdout.String()) != strings.TrimSpace(read(t, result)) {
		t.Errorf("stdout %q differs from the result file %q", stdout.String(), read(t, result))
	}

	refused := loopback.URL(t)
	if code := runBackup([]string{"--endpoints=" + refused.String(), "--file=" + file, "--result-file=" + result, "--timeout=10s"}, &stdout); code != 1 {
		t.Fatalf("a backup of a member that is not there exits %d, want 1", code)
	}
	if _, err := backup.ParseResult(read(t, result)); err == nil || !strings.Contains(err.Error(), "no etcd member answered") {
		t.Fatalf("the failure reads as %v", err)
	}

	if code := runBackup([]string{"--endpoints=" + endpoint, "--result-file=" + result}, &stdout); code != 2 {
		t.Fatalf("a backup without a destination exits %d, want 2", code)
	}
	if _, err := backup.ParseResult(read(t, result)); err == nil || !strings.Contains(err.Error(), "--s3-path") {
		t.Fatalf("bad flags read as %v", err)
	}
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
