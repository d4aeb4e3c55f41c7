package seed_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/backup/backuptest"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// contents is every key and value of the cluster c reaches, and its revision.
func contents(ctx context.Context, t *testing.T, c *clientv3.Client) (map[string]string, int64) {
	t.Helper()
	resp, err := c.Get(ctx, "", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	kvs := map[string]string{}
	for _, kv := range resp.Kvs {
		kvs[string(kv.Key)] = string(kv.Value)
	}
	return kvs, resp.Header.Revision
}

// writeHistory writes keys with some history behind them: overwrites and a
// delete, so the revision is not the number of keys.
func writeHistory(ctx context.Context, t *testing.T, c *clientv3.Client, tag string) {
	t.Helper()
	for i := range 20 {
		if _, err := c.Put(ctx, fmt.Sprintf("key/%02d", i%12), fmt.Sprintf("%s-%d", tag, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Delete(ctx, "key/03"); err != nil {
		t.Fatal(err)
	}
}

// backupSources are where a backup is taken to and restored from: a file,
// and S3 when ETCDPROOF_WEED names a store to run.
type backupSource struct {
	name  string
	store backup.Store
	key   string
	// from sets the seed's source to key.
	from func(c *seed.Config, key string)
}

func backupSources(t *testing.T) []backupSource {
	t.Helper()
	dir := t.TempDir()
	sources := []backupSource{{
		name: "file", store: backup.FileStore{Dir: dir}, key: "etcd.backup",
		from: func(c *seed.Config, key string) { c.FromFile = filepath.Join(dir, key) },
	}}
	if backuptest.Enabled() {
		s3 := backuptest.StartS3(t)
		sources = append(sources, backupSource{
			name: "s3", store: s3.Store(t), key: "cluster/etcd.backup",
			from: func(c *seed.Config, key string) {
				c.FromS3Path, c.S3Endpoint, c.S3ForcePathStyle, c.AWSDir = s3.Bucket+"/"+key, s3.Endpoint, true, s3.AWSDir
			},
		})
	} else {
		t.Logf("%s is unset: restoring from S3 is not tested", backuptest.EnvWeed)
	}
	return sources
}

// checkRestored wants the cluster c reaches to hold exactly want at revision
// rev, and one member.
func checkRestored(ctx context.Context, t *testing.T, c *clientv3.Client, want map[string]string, rev int64) {
	t.Helper()
	got, gotRev := contents(ctx, t, c)
	if !maps.Equal(got, want) {
		t.Errorf("restored cluster holds %v, want %v", got, want)
	}
	if gotRev != rev {
		t.Errorf("restored cluster is at revision %d, want the backup's %d", gotRev, rev)
	}
	members, err := c.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(members.Members) != 1 {
		t.Errorf("restored cluster has members %v, want one", members.Members)
	}
}

// etcdServer runs a one-member etcd on dir: in the test's process, or one of
// the release binaries the repository's scripts build.
type etcdServer struct {
	name string
	// version is the start of the version the server reports.
	version string
	run     func(t *testing.T, dir string, m *member)
}

func etcdServers(t *testing.T) []etcdServer {
	servers := []etcdServer{{name: "embedded", version: version.Version, run: func(t *testing.T, dir string, m *member) {
		m.start(t, dir, m.name+"="+m.peerURL, m.name)
	}}}
	binaries := etcdBinaries(t)
	for _, minor := range slices.Sorted(maps.Keys(binaries)) {
		servers = append(servers, etcdServer{name: minor, version: strings.TrimPrefix(minor, "v") + ".", run: func(t *testing.T, dir string, m *member) {
			runEtcd(t, binaries[minor], dir, m)
		}})
	}
	if len(binaries) == 0 {
		t.Log("no etcd binaries under $ETCDPROOF_CACHE/etcd (scripts/build-etcd.sh builds them): the embedded etcd alone is tested")
	}
	return servers
}

// waitReady waits until c's member serves reads.
func waitReady(ctx context.Context, t *testing.T, c *clientv3.Client) {
	t.Helper()
	for {
		if _, err := c.Get(ctx, "ready?"); err == nil {
			return
		} else if ctx.Err() != nil {
			t.Fatalf("etcd does not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRestoreFromABackup: a backup taken with backup.Take (to a file, and to
// S3) seeds a new one-member cluster holding every key and value as of the
// backup, at its revision; writes made after the backup are absent. On the
// embedded etcd and on every release built (3.4 to 3.7): the backup is taken
// from, and restored for, the same release.
func TestRestoreFromABackup(t *testing.T) {
	sources := backupSources(t)
	for _, server := range etcdServers(t) {
		t.Run(server.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			source := &member{name: "source", peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
			server.run(t, t.TempDir(), source)
			c := dial(t, source.clientURL)
			waitReady(ctx, t, c)
			writeHistory(ctx, t, c, "before")
			want, wantRev := contents(ctx, t, c)

			results := map[string]backup.Result{}
			for _, s := range sources {
				res, err := backup.Take(ctx, backup.Config{Endpoints: []string{source.clientURL}, Store: s.store, Key: server.name + "/" + s.key})
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if res.EtcdRevision != wantRev || !strings.HasPrefix(res.EtcdVersion, server.version) {
					t.Fatalf("%s: backup at revision %d of etcd %s, want %d of %s", s.name, res.EtcdRevision, res.EtcdVersion, wantRev, server.name)
				}
				results[s.name] = res
			}
			writeHistory(ctx, t, c, "after")
			if _, err := c.Put(ctx, "written-after-the-backup", "x"); err != nil {
				t.Fatal(err)
			}

			for _, s := range sources {
				t.Run(s.name, func(t *testing.T) {
					fresh := &member{name: "fresh-" + s.name, peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
					cfg := seed.Config{DataDir: filepath.Join(t.TempDir(), "data"), Name: fresh.name, PeerURL: fresh.peerURL,
						Token: fresh.name, Timeout: time.Minute}
					s.from(&cfg, server.name+"/"+s.key)
					if err := seed.Run(ctx, zap.NewNop(), cfg); err != nil {
						t.Fatal(err)
					}
					server.run(t, cfg.DataDir, fresh)
					restored := dial(t, fresh.clientURL)
					waitReady(ctx, t, restored)
					checkRestored(ctx, t, restored, want, results[s.name].EtcdRevision)
				})
			}
		})
	}
}

// TestSeedFromAMissingBackup: the error names the backup, and nothing is
// left in the data dir or beside it.
func TestSeedFromAMissingBackup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := seed.Config{FromFile: filepath.Join(t.TempDir(), "etcd.backup"), DataDir: dir, Name: "m", PeerURL: "http://m:2380", Token: "m"}
	err := seed.Run(context.Background(), zap.NewNop(), cfg)
	if err == nil || !strings.Contains(err.Error(), cfg.FromFile) {
		t.Fatalf("seeding from a missing backup: %v, want an error naming %s", err, cfg.FromFile)
	}
	for _, p := range []string{dir, dir + ".seed"} {
		if entries, _ := filepath.Glob(filepath.Join(p, "*")); len(entries) > 0 {
			t.Fatalf("left %v", entries)
		}
	}
}

// takeBackup takes a backup of a member with some history into a file of
// its own; it returns the backup and the file's folder.
func takeBackup(ctx context.Context, t *testing.T) (backup.Result, string) {
	t.Helper()
	source := &member{name: "source", peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
	source.start(t, t.TempDir(), source.name+"="+source.peerURL, "old")
	<-source.etcd.Server.ReadyNotify()
	writeHistory(ctx, t, dial(t, source.clientURL), "before")
	dir := t.TempDir()
	res, err := backup.Take(ctx, backup.Config{Endpoints: []string{source.clientURL}, Store: backup.FileStore{Dir: dir}, Key: "etcd.backup"})
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

// TestSeedFromACorruptBackup: a backup whose bytes changed after it was
// taken is refused (etcd's sha256 trailer), and no member is left.
func TestSeedFromACorruptBackup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, _ := takeBackup(ctx, t)
	b, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-100] ^= 0xff // in the last page, before the trailer
	if err := os.WriteFile(res.Path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	cfg := seed.Config{FromFile: res.Path, DataDir: data, Name: "m", PeerURL: loopback.HTTP(t), Token: "m"}
	if err := seed.Run(ctx, zap.NewNop(), cfg); err == nil {
		t.Fatal("a corrupt backup was restored")
	} else {
		t.Log(err)
	}
	if _, err := os.Stat(filepath.Join(data, "member")); !os.IsNotExist(err) {
		t.Fatalf("a member was left in %s: %v", data, err)
	}
}

// TestVerifyOnly: --verify-only restores a good backup into a scratch
// directory and leaves nothing, not even in a data dir that holds a member
// already (a verify pod shares no data dir, but must not count on it); a
// missing or corrupt backup fails it as it fails a seed.
func TestVerifyOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, dir := takeBackup(ctx, t)
	data := filepath.Join(t.TempDir(), "data")
	verify := seed.Config{FromFile: res.Path, DataDir: data, Name: "m", PeerURL: loopback.HTTP(t), Token: "m", VerifyOnly: true}
	if err := seed.Run(ctx, zap.NewNop(), verify); err != nil {
		t.Fatalf("verifying a good backup: %v", err)
	}
	for _, p := range []string{data, data + ".seed"} {
		if entries, _ := filepath.Glob(filepath.Join(p, "*")); len(entries) > 0 {
			t.Fatalf("verifying left %v", entries)
		}
	}
	missing := verify
	missing.FromFile = filepath.Join(dir, "no-such.backup")
	if err := seed.Run(ctx, zap.NewNop(), missing); err == nil || !strings.Contains(err.Error(), missing.FromFile) {
		t.Fatalf("verifying a missing backup: %v, want an error naming it", err)
	}
	b, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-100] ^= 0xff
	if err := os.WriteFile(res.Path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := seed.Run(ctx, zap.NewNop(), verify); err == nil {
		t.Fatal("a corrupt backup was verified")
	}
	// The flag reads back from the command line the verify pod runs.
	cfg, err := seed.ParseFlags(verify.Command("etcd-operator")[2:])
	if err != nil || !cfg.VerifyOnly {
		t.Fatalf("ParseFlags(Command()) = %+v, %v; want VerifyOnly", cfg, err)
	}
}
