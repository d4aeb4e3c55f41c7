package seed_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// etcdBinaries finds one etcd binary per minor release among those the
// repository's scripts build (ETCDPROOF_CACHE, default ~/.cache/etcdproof:
// etcd/v<version>/etcd).
func etcdBinaries(t *testing.T) map[string]string {
	t.Helper()
	cache := os.Getenv("ETCDPROOF_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		cache = filepath.Join(home, ".cache", "etcdproof")
	}
	found, _ := filepath.Glob(filepath.Join(cache, "etcd", "v3.*", "etcd"))
	slices.Sort(found)
	byMinor := map[string]string{}
	for _, bin := range found {
		v := strings.Split(filepath.Base(filepath.Dir(bin)), ".")
		byMinor[v[0]+"."+v[1]] = bin // one patch release per minor is enough
	}
	return byMinor
}

// runEtcd starts a real etcd binary as a one-member cluster on dir.
func runEtcd(t *testing.T, bin, dir string, m *member) func() {
	t.Helper()
	cmd := exec.Command(bin, "--name="+m.name, "--data-dir="+dir,
		"--listen-client-urls="+m.clientURL, "--advertise-client-urls="+m.clientURL,
		"--listen-peer-urls="+m.peerURL, "--initial-advertise-peer-urls="+m.peerURL,
		"--initial-cluster="+m.name+"="+m.peerURL, "--initial-cluster-token="+m.name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	return stop
}

// TestSeededDataStartsOnEveryRelease: member images of every supported minor
// release (3.4 to 3.7) start on what the seed step restores from a member of
// the same release, with its data. Skipped where no etcd binary is built.
func TestSeededDataStartsOnEveryRelease(t *testing.T) {
	binaries := etcdBinaries(t)
	if len(binaries) == 0 {
		t.Skip("no etcd binaries under $ETCDPROOF_CACHE/etcd (scripts/build-etcd.sh builds them)")
	}
	for minor, bin := range binaries {
		t.Run(minor, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			source := &member{name: "source", peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
			stopSource := runEtcd(t, bin, t.TempDir(), source)
			c := dial(t, source.clientURL)
			for {
				if _, err := c.Put(ctx, "kept", minor); err == nil {
					break
				} else if ctx.Err() != nil {
					t.Fatalf("%s does not take writes: %v", bin, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			fresh := &member{name: "fresh", peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
			dir := filepath.Join(t.TempDir(), "data")
			cfg := seed.Config{From: source.clientURL, DataDir: dir, Name: fresh.name, PeerURL: fresh.peerURL, Token: fresh.name}
			if err := seed.Run(ctx, zap.NewNop(), cfg); err != nil {
				t.Fatal(err)
			}
			stopSource()
			runEtcd(t, bin, dir, fresh)
			c = dial(t, fresh.clientURL)
			for {
				got, err := c.Get(ctx, "kept")
				if err == nil {
					if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != minor {
						t.Fatalf("seeded %s member holds %v", minor, got.Kvs)
					}
					break
				} else if ctx.Err() != nil {
					t.Fatalf("seeded %s member does not answer: %v", minor, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
