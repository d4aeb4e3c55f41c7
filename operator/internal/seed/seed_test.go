package seed_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/internal/loopback"
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

type member struct {
	name, peerURL, clientURL string
	etcd                     *embed.Etcd
}

func urls(t *testing.T, s string) []url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return []url.URL{*u}
}

// start runs m on dir as a member of initialCluster.
func (m *member) start(t *testing.T, dir, initialCluster, token string) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = dir
	cfg.ListenPeerUrls = urls(t, m.peerURL)
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.ListenClientUrls = urls(t, m.clientURL)
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenMetricsUrls = nil
	cfg.InitialCluster = initialCluster
	cfg.InitialClusterToken = token
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting %s: %v", m.name, err)
	}
	m.etcd = e
	t.Cleanup(m.stop)
}

func (m *member) stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

func dial(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSeedFromASurvivorWithoutQuorum: of three members two stop; the third
// has no leader, yet serves its snapshot; a new member seeded from it starts
// as a one-member cluster holding what the survivor held. A second run on
// the seeded data dir leaves it alone.
func TestSeedFromASurvivorWithoutQuorum(t *testing.T) {
	ms := []*member{{name: "a"}, {name: "b"}, {name: "c"}}
	var initial []string
	for _, m := range ms {
		m.peerURL, m.clientURL = loopback.HTTP(t), loopback.HTTP(t)
		initial = append(initial, m.name+"="+m.peerURL)
	}
	done := make(chan struct{}, len(ms))
	for _, m := range ms {
		go func() {
			m.start(t, t.TempDir(), strings.Join(initial, ","), "old")
			<-m.etcd.Server.ReadyNotify()
			done <- struct{}{}
		}()
	}
	for range ms {
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	survivor := dial(t, ms[2].clientURL)
	if _, err := survivor.Put(ctx, "kept", "before the loss"); err != nil {
		t.Fatal(err)
	}
	ms[0].stop()
	ms[1].stop()
	for {
		st, err := survivor.Status(ctx, ms[2].clientURL)
		if err != nil {
			t.Fatal(err)
		}
		if st.Leader == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the survivor still sees a leader")
		case <-time.After(100 * time.Millisecond):
		}
	}

	fresh := &member{name: "fresh", peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
	cfg := seed.Config{From: ms[2].clientURL, DataDir: filepath.Join(t.TempDir(), "data"),
		Name: fresh.name, PeerURL: fresh.peerURL, Token: "new", Timeout: time.Minute}
	if err := seed.Run(ctx, zap.NewNop(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.DataDir + ".seed"); !os.IsNotExist(err) {
		t.Fatalf("work dir left behind: %v", err)
	}
	fresh.start(t, cfg.DataDir, fresh.name+"="+fresh.peerURL, "new")
	select {
	case <-fresh.etcd.Server.ReadyNotify():
	case <-ctx.Done():
		t.Fatal("the seeded member did not start")
	}
	c := dial(t, fresh.clientURL)
	got, err := c.Get(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "before the loss" {
		t.Fatalf("seeded member holds %v, want kept=before the loss", got.Kvs)
	}
	members, err := c.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(members.Members) != 1 || members.Members[0].Name != fresh.name {
		t.Fatalf("seeded cluster has members %v, want only %s", members.Members, fresh.name)
	}
	if _, err := c.Put(ctx, "after", "recovery"); err != nil {
		t.Fatalf("the seeded cluster takes no writes: %v", err)
	}

	// Again, as when the kubelet reruns the init container: nothing changes.
	fresh.stop()
	if err := seed.Run(ctx, zap.NewNop(), cfg); err != nil {
		t.Fatal(err)
	}
	fresh.start(t, cfg.DataDir, fresh.name+"="+fresh.peerURL, "new")
	<-fresh.etcd.Server.ReadyNotify()
	got, err = dial(t, fresh.clientURL).Get(ctx, "after")
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("a second run lost the write made after seeding: %v %v", got, err)
	}
}

func TestParseFlagsNeedsEveryFlag(t *testing.T) {
	if _, err := seed.ParseFlags([]string{"--from=http://x:2379", "--data-dir=/d", "--name=n", "--initial-advertise-peer-urls=http://n:2380"}); err == nil {
		t.Fatal("no error without --initial-cluster-token")
	}
}

// TestSeedCommandParses: the command line the operator gives the seed init
// container (desired.SeedCommand) is what the subcommand reads.
func TestSeedCommandParses(t *testing.T) {
	c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"}}
	cmd := desired.SeedCommand(c, "demo-abc", desired.Seed{FromURL: "http://10.0.0.7:2379"})
	if cmd[0] != desired.OperatorBinary || cmd[1] != "seed" {
		t.Fatalf("command %v does not run the seed subcommand", cmd)
	}
	got, err := seed.ParseFlags(cmd[2:])
	if err != nil {
		t.Fatal(err)
	}
	want := seed.Config{From: "http://10.0.0.7:2379", DataDir: desired.DataDir, Name: "demo-abc",
		PeerURL: desired.PeerURL(c, "demo-abc"), Token: desired.SeedToken("demo-abc"), Timeout: got.Timeout, AWSDir: seed.DefaultAWSDir}
	if got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}

// TestRestoreSeedCommandParses: the command lines the operator gives the
// seed container of a member restored from a backup
// (desired.RestoreSeedCommand) are what the subcommand reads.
func TestRestoreSeedCommandParses(t *testing.T) {
	c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"}}
	base := seed.Config{DataDir: desired.DataDir, Name: "demo-abc", PeerURL: desired.PeerURL(c, "demo-abc"),
		Token: desired.SeedToken("demo-abc"), Timeout: seed.DefaultTimeout, AWSDir: seed.DefaultAWSDir}
	for _, tc := range []struct {
		spec etcdv1beta2.RestoreSpec
		want func(*seed.Config)
	}{
		{etcdv1beta2.RestoreSpec{BackupStorageType: etcdv1beta2.BackupStorageTypeS3, RestoreSource: etcdv1beta2.RestoreSource{
			S3: &etcdv1beta2.S3RestoreSource{Path: "bucket/etcd.backup", AWSSecret: "aws", Endpoint: "http://minio:9000", ForcePathStyle: true}}},
			func(c *seed.Config) {
				c.FromS3Path, c.S3Endpoint, c.S3ForcePathStyle, c.AWSDir = "bucket/etcd.backup", "http://minio:9000", true, desired.RestoreAWSDir
			}},
		{etcdv1beta2.RestoreSpec{BackupStorageType: etcdv1beta2.BackupStorageTypePVC, RestoreSource: etcdv1beta2.RestoreSource{
			PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "dir/etcd.backup"}}},
			func(c *seed.Config) { c.FromFile = desired.RestoreBackupDir + "/dir/etcd.backup" }},
	} {
		cmd := desired.RestoreSeedCommand(c, "demo-abc", tc.spec)
		got, err := seed.ParseFlags(cmd[2:])
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		want := base
		tc.want(&want)
		if got != want {
			t.Fatalf("%v parsed as %+v, want %+v", cmd, got, want)
		}
	}
}

// TestSeedConfigCommandParses: Config.Command is what ParseFlags reads.
func TestSeedConfigCommandParses(t *testing.T) {
	for _, c := range []seed.Config{
		{From: "http://10.0.0.7:2379", DataDir: "/d", Name: "n", PeerURL: "http://n:2380", Token: "t", Timeout: time.Minute, AWSDir: seed.DefaultAWSDir},
		{FromS3Path: "b/k", S3Endpoint: "http://s3:8333", S3ForcePathStyle: true, AWSDir: "/aws", DataDir: "/d", Name: "n", PeerURL: "http://n:2380", Token: "t", Timeout: seed.DefaultTimeout},
		{FromFile: "/var/etcd-backup/k", DataDir: "/d", Name: "n", PeerURL: "http://n:2380", Token: "t", Timeout: seed.DefaultTimeout, AWSDir: seed.DefaultAWSDir},
	} {
		cmd := c.Command("etcd-operator")
		if cmd[0] != "etcd-operator" || cmd[1] != seed.Subcommand {
			t.Fatalf("command %v does not run the seed subcommand", cmd)
		}
		got, err := seed.ParseFlags(cmd[2:])
		if err != nil || got != c {
			t.Fatalf("%v parsed as %+v (%v), want %+v", cmd, got, err, c)
		}
	}
}

func TestParseFlagsWantsOneSource(t *testing.T) {
	member := []string{"--data-dir=/d", "--name=n", "--initial-advertise-peer-urls=http://n:2380", "--initial-cluster-token=t"}
	for _, tc := range []struct {
		sources []string
		want    string
	}{
		{nil, "exactly one of --from, --from-s3-path and --from-file"},
		{[]string{"--from=http://x:2379", "--from-file=/f"}, "exactly one of"},
		{[]string{"--from-s3-path=b/k", "--from-file=/f"}, "exactly one of"},
		{[]string{"--from-s3-path=bucket"}, "<bucket>/<object key>"},
	} {
		_, err := seed.ParseFlags(append(tc.sources, member...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.sources, err, tc.want)
		}
	}
}
