package backup_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// startEtcd runs a one-member etcd cluster in the test's process and returns
// a client of it; n keys k0..k(n-1) are written first.
func startEtcd(t *testing.T, n int) (string, *clientv3.Client) {
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
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client.String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for i := range n {
		if _, err := c.Put(t.Context(), fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return client.String(), c
}

func revision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(t.Context(), "k0")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// refusedURL is a client URL nobody listens on.
func refusedURL(t *testing.T) string {
	u := loopback.URL(t)
	return u.String()
}

// TestTakeToAFile: the snapshot of the member with the highest revision is
// stored whole (its sha256 checks out), and the result says what it holds.
// The endpoints belong to two different one-member clusters here, so the
// one with more writes must be the one chosen; a dead endpoint is skipped.
func TestTakeToAFile(t *testing.T) {
	low, _ := startEtcd(t, 3)
	high, c := startEtcd(t, 10)
	dir := t.TempDir()
	res, err := backup.Take(t.Context(), backup.Config{
		Endpoints: []string{refusedURL(t), low, high}, DialTimeout: time.Second,
		Store: backup.FileStore{Dir: dir}, Key: "etcd.backup",
	})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "etcd.backup")
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != backup.FileMode {
		t.Errorf("backup file mode %s, want %s", info.Mode().Perm(), os.FileMode(backup.FileMode))
	}
	want := backup.Result{Path: file, EtcdRevision: revision(t, c), EtcdVersion: version.Version, Size: info.Size()}
	if res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	st, err := snapshot.NewV3(zap.NewNop()).Status(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Revision != want.EtcdRevision || st.TotalKey != 10 {
		t.Fatalf("the snapshot holds revision %d and %d keys, want %d and 10", st.Revision, st.TotalKey, want.EtcdRevision)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the backup dir holds %v, want the backup alone", entries)
	}
}

func TestTakeWithNoMemberAnswering(t *testing.T) {
	a, b := refusedURL(t), refusedURL(t)
	start := time.Now()
	_, err := backup.Take(t.Context(), backup.Config{
		Endpoints: []string{a, b}, DialTimeout: 500 * time.Millisecond,
		Store: backup.FileStore{Dir: t.TempDir()}, Key: "etcd.backup",
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"no etcd member answered", a, b} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to give up on members that refuse connections", d)
	}
	if _, err := backup.Take(t.Context(), backup.Config{Store: backup.FileStore{Dir: t.TempDir()}, Key: "k"}); err == nil {
		t.Error("no error without endpoints")
	}
}

// clock returns times a minute apart, from a fixed start.
func clock() func() time.Time {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(time.Minute)
		return now
	}
}

// testRetention takes three periodic backups with MaxBackups 2 and wants
// the newest two left, and objects that are not periodic backups of the key
// left alone.
func testRetention(t *testing.T, store backup.Store) {
	endpoint, c := startEtcd(t, 1)
	ctx := t.Context()
	for _, other := range []string{"etcd.backup", "etcd.backup_vlatest", "etcd.backupX_v1_2026-12-04-10:00:00"} {
		if err := store.Put(ctx, other, strings.NewReader("not mine")); err != nil {
			t.Fatal(err)
		}
	}
	now := clock()
	var kept []string
	for i := range 3 {
		if _, err := c.Put(ctx, "round", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		res, err := backup.Take(ctx, backup.Config{Endpoints: []string{endpoint}, Store: store, Key: "etcd.backup",
			Periodic: true, MaxBackups: 2, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Warning != "" {
			t.Fatal(res.Warning)
		}
		key := fmt.Sprintf("etcd.backup_v%d_2026-12-04-10:0%d:00", revision(t, c), i+1)
		if res.Path != store.Path(key) {
			t.Fatalf("backup %d stored as %s, want %s", i, res.Path, store.Path(key))
		}
		kept = append(kept, key)
	}
	objects, err := store.List(ctx, "etcd.backup")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objects {
		got = append(got, o.Key)
	}
	slices.Sort(got)
	want := append([]string{"etcd.backup", "etcd.backupX_v1_2026-12-04-10:00:00", "etcd.backup_vlatest"}, kept[1:]...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("left %q, want %q", got, want)
	}
}

func TestRetentionInAFileStore(t *testing.T) {
	testRetention(t, backup.FileStore{Dir: t.TempDir()})
}

// TestFetch: a stored backup is copied to a local file; an absent one is
// ErrNotFound and leaves no file.
func TestFetch(t *testing.T) {
	store := backup.FileStore{Dir: t.TempDir()}
	if err := store.Put(t.Context(), "sub/etcd.backup", strings.NewReader("snapshot")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "snapshot.db")
	if err := backup.Fetch(t.Context(), store, "sub/etcd.backup", dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "snapshot" {
		t.Fatalf("fetched %q, %v", b, err)
	}
	missing := filepath.Join(t.TempDir(), "snapshot.db")
	if err := backup.Fetch(t.Context(), store, "nothing", missing); !errors.Is(err, backup.ErrNotFound) {
		t.Fatalf("fetching an absent backup: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed fetch left %s", missing)
	}
}

// TestFileStorePutIsAtomic: a Put whose reader fails leaves neither the file
// nor a temporary one, and an earlier backup under the key stays.
func TestFileStorePutIsAtomic(t *testing.T) {
	dir := t.TempDir()
	store := backup.FileStore{Dir: dir}
	if err := store.Put(t.Context(), "etcd.backup", strings.NewReader("old")); err != nil {
		t.Fatal(err)
	}
	broken := io.MultiReader(strings.NewReader("half"), failingReader{})
	if err := store.Put(t.Context(), "etcd.backup", broken); err == nil {
		t.Fatal("no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("dir holds %v after a failed put", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "etcd.backup")); string(b) != "old" {
		t.Fatalf("a failed put changed the file to %q", b)
	}
	for _, key := range []string{"../escape", "/abs", ""} {
		if err := store.Put(t.Context(), key, strings.NewReader("x")); err == nil {
			t.Errorf("key %q accepted", key)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("stream broken") }

// TestScratchDirRecordsTheSnapshotsOwnRevision takes backups while a client
// writes as fast as it can: streamed, the revision recorded is the member's
// just before the snapshot and may lag what the snapshot holds; with a
// scratch dir it is the snapshot's own, every time, and the scratch dir is
// left empty.
func TestScratchDirRecordsTheSnapshotsOwnRevision(t *testing.T) {
	ep, c := startEtcd(t, 10)
	ctx, stop := context.WithCancel(t.Context())
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = c.Put(ctx, fmt.Sprintf("busy/%d", i%100), strings.Repeat("x", 1000))
		}
	}()
	defer func() { stop(); <-writing }()
	scratch := t.TempDir()
	for i := range 5 {
		dir := t.TempDir()
		res, err := backup.Take(t.Context(), backup.Config{Endpoints: []string{ep}, Store: backup.FileStore{Dir: dir}, Key: "etcd.backup", ScratchDir: scratch})
		if err != nil {
			t.Fatal(err)
		}
		st, err := snapshot.NewV3(zap.NewNop()).Status(filepath.Join(dir, "etcd.backup"))
		if err != nil {
			t.Fatal(err)
		}
		if res.EtcdRevision != st.Revision {
			t.Fatalf("backup %d: recorded revision %d, the snapshot holds %d", i, res.EtcdRevision, st.Revision)
		}
	}
	if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
		t.Errorf("the scratch dir keeps %v", entries)
	}
}
