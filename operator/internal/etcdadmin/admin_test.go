package etcdadmin_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// member is one real etcd server on loopback ports.
type member struct {
	name      string
	peerURL   string
	clientURL string
	etcd      *embed.Etcd
}

func newMember(t *testing.T, name string) *member {
	return &member{name: name, peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t)}
}

func initialCluster(ms ...*member) string {
	pairs := make([]string, 0, len(ms))
	for _, m := range ms {
		pairs = append(pairs, m.name+"="+m.peerURL)
	}
	return strings.Join(pairs, ",")
}

func mustURL(t *testing.T, s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return *u
}

// start launches m; state is "new" or "existing".
func (m *member) start(t *testing.T, cluster, state string) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = t.TempDir()
	cfg.ListenPeerUrls = []url.URL{mustURL(t, m.peerURL)}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.ListenClientUrls = []url.URL{mustURL(t, m.clientURL)}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.InitialCluster = cluster
	cfg.InitialClusterToken = "etcdadmin-test"
	cfg.ClusterState = state
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.StrictReconfigCheck = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting member %s: %v", m.name, err)
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

// startCluster starts three members and waits until they serve.
func startCluster(t *testing.T) []*member {
	t.Helper()
	ms := []*member{newMember(t, "m0"), newMember(t, "m1"), newMember(t, "m2")}
	cluster := initialCluster(ms...)
	for _, m := range ms {
		m.start(t, cluster, "new")
	}
	for _, m := range ms {
		select {
		case <-m.etcd.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("member %s did not become ready", m.name)
		}
	}
	return ms
}

func dial(t *testing.T, ms ...*member) etcdadmin.Admin {
	t.Helper()
	var eps []string
	for _, m := range ms {
		eps = append(eps, m.clientURL)
	}
	a, err := etcdadmin.Dial(eps, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventually polls cond until it holds or the context ends. Membership
// changes are retried because etcd refuses them until every voter has been
// connected for a few seconds.
func eventually(t *testing.T, c context.Context, what string, cond func() error) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = cond(); last == nil {
			return
		}
		select {
		case <-c.Done():
			t.Fatalf("%s: %v", what, last)
		case <-tick.C:
		}
	}
}

func findMember(members []etcdadmin.Member, id uint64) (etcdadmin.Member, bool) {
	for _, m := range members {
		if m.ID == id {
			return m, true
		}
	}
	return etcdadmin.Member{}, false
}

func leaderOf(c context.Context, a etcdadmin.Admin) (uint64, error) {
	for _, s := range a.Statuses(c) {
		if s.Healthy() {
			return s.LeaderID, nil
		}
	}
	return 0, fmt.Errorf("no endpoint answered")
}

func TestAddLearnerThenPromote(t *testing.T) {
	t.Parallel()
	ms := startCluster(t)
	c := ctx(t)
	a := dial(t, ms...)

	joiner := newMember(t, "m3")
	var added etcdadmin.Member
	var members []etcdadmin.Member
	eventually(t, c, "add a learner", func() (err error) {
		added, members, err = a.AddLearner(c, joiner.peerURL)
		return err
	})
	if !added.IsLearner || len(members) != 4 {
		t.Fatalf("want a learner in 4 members, got learner=%v members=%d", added.IsLearner, len(members))
	}
	// A learner that has not started cannot be promoted.
	if err := a.Promote(c, added.ID); !etcdadmin.IsLearnerNotReady(err) {
		t.Fatalf("promoting a learner that never started: want not-ready, got %v", err)
	}
	joiner.start(t, initialCluster(append(ms, joiner)...), "existing")
	eventually(t, c, "promote the caught-up learner", func() error { return a.Promote(c, added.ID) })

	got, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := findMember(got, added.ID)
	if !ok || m.IsLearner || m.Name != "m3" {
		t.Fatalf("want m3 as a started voter, got %+v (found=%v)", m, ok)
	}
}

func TestReplaceDeadMember(t *testing.T) {
	t.Parallel()
	ms := startCluster(t)
	c := ctx(t)
	a := dial(t, ms[0], ms[1])

	before, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	var deadID uint64
	for _, m := range before {
		if m.Name == ms[2].name {
			deadID = m.ID
		}
	}
	ms[2].stop()

	// While the dead member is a voter, etcd refuses even a learner add.
	replacement := newMember(t, "m2b")
	if _, _, err := a.AddLearner(c, replacement.peerURL); err == nil {
		t.Fatal("etcd accepted a new member while a dead voter was still in the membership")
	}
	eventually(t, c, "remove the dead member", func() error { return a.Remove(c, deadID) })
	var added etcdadmin.Member
	eventually(t, c, "add the replacement as a learner", func() (err error) {
		added, _, err = a.AddLearner(c, replacement.peerURL)
		return err
	})
	replacement.start(t, initialCluster(ms[0], ms[1], replacement), "existing")
	eventually(t, c, "promote the replacement", func() error { return a.Promote(c, added.ID) })

	after, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := findMember(after, deadID); ok || len(after) != 3 {
		t.Fatalf("want 3 members without the dead one, got %+v", after)
	}
	for _, s := range dial(t, ms[0], ms[1], replacement).Statuses(c) {
		if !s.Healthy() {
			t.Fatalf("endpoint %s unhealthy after replacement: %v", s.Endpoint, s.Errors)
		}
	}
}

func TestRemoveHealthyMemberKeepsQuorum(t *testing.T) {
	t.Parallel()
	ms := startCluster(t)
	c := ctx(t)
	a := dial(t, ms...)
	members, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	leader, err := leaderOf(c, a)
	if err != nil {
		t.Fatal(err)
	}
	var follower etcdadmin.Member
	for _, m := range members {
		if m.ID != leader {
			follower = m
			break
		}
	}
	eventually(t, c, "remove a follower", func() error { return a.Remove(c, follower.ID) })
	after, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := findMember(after, follower.ID); ok || len(after) != 2 {
		t.Fatalf("want 2 members without %s, got %+v", follower.Name, after)
	}
}

func TestMoveLeader(t *testing.T) {
	t.Parallel()
	ms := startCluster(t)
	c := ctx(t)
	a := dial(t, ms...)
	leader, err := leaderOf(c, a)
	if err != nil {
		t.Fatal(err)
	}
	members, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	var target uint64
	for _, m := range members {
		if m.ID != leader {
			target = m.ID
			break
		}
	}
	eventually(t, c, "move leadership", func() error { return a.MoveLeader(c, target) })
	eventually(t, c, "leadership moves to the target", func() error {
		got, err := leaderOf(c, a)
		if err != nil || got != target {
			return fmt.Errorf("leader %x, want %x (%v)", got, target, err)
		}
		return nil
	})
}

// startWithQuota starts one member whose backend quota is quota bytes.
func startWithQuota(t *testing.T, quota int64) *member {
	t.Helper()
	m := newMember(t, "full")
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = t.TempDir()
	cfg.ListenPeerUrls = []url.URL{mustURL(t, m.peerURL)}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.ListenClientUrls = []url.URL{mustURL(t, m.clientURL)}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.InitialCluster = initialCluster(m)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.QuotaBackendBytes = quota
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.etcd = e
	t.Cleanup(m.stop)
	<-e.Server.ReadyNotify()
	return m
}

// fill writes 100 KiB values under prefix until etcd refuses with NOSPACE.
func fill(t *testing.T, c context.Context, cli *clientv3.Client, prefix string) {
	t.Helper()
	value := strings.Repeat("x", 100<<10)
	for i := 0; i < 1000; i++ {
		_, err := cli.Put(c, fmt.Sprintf("%s/%03d", prefix, i), value)
		if err != nil && strings.Contains(err.Error(), "database space exceeded") {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("etcd never raised NOSPACE")
}

func clientOf(t *testing.T, m *member) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.clientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// TestAlarmIsNotMemberDeath fills a real member past its quota until etcd
// raises NOSPACE: the member still counts as healthy (it answers, knows a
// leader, serves reads and compaction) and the alarm is listed apart. Taken
// for an error, it made every member of the cluster look dead.
func TestAlarmIsNotMemberDeath(t *testing.T) {
	m := startWithQuota(t, 2<<20)
	c := ctx(t)
	fill(t, c, clientOf(t, m), "fill")
	statuses := dial(t, m).Statuses(c)
	if len(statuses) != 1 {
		t.Fatalf("statuses %+v", statuses)
	}
	s := statuses[0]
	if !s.Healthy() || len(s.Errors) > 0 {
		t.Errorf("a member under NOSPACE is unhealthy: %+v", s)
	}
	if len(s.Alarms) != 1 || !strings.Contains(s.Alarms[0], "NOSPACE") {
		t.Errorf("alarms %q, want the NOSPACE alarm", s.Alarms)
	}
}

// TestSpaceIsReclaimed takes a real member through what the operator does
// once NOSPACE is raised: the status tells the file from the data in use,
// compaction frees pages but leaves the file as large (etcd's quota counts
// the file), a defragmentation gives the free pages back, and disarming
// NOSPACE lets writes in again.
func TestSpaceIsReclaimed(t *testing.T) {
	const quota = 4 << 20
	m := startWithQuota(t, quota)
	c := ctx(t)
	cli := clientOf(t, m)
	fill(t, c, cli, "fill")
	a := dial(t, m)

	alarms, err := a.Alarms(c)
	if err != nil || len(alarms) != 1 || alarms[0].Type != etcdadmin.AlarmNoSpace || alarms[0].MemberID == 0 {
		t.Fatalf("alarms %+v (%v), want one NOSPACE alarm of the member", alarms, err)
	}
	full := a.Statuses(c)[0]
	if full.DBSize < quota*9/10 || full.DBSizeInUse == 0 || full.DBSizeQuota != quota {
		t.Fatalf("a full member: file %d, in use %d, quota %d", full.DBSize, full.DBSizeInUse, full.DBSizeQuota)
	}

	del, err := cli.Delete(c, "fill/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	revision := a.Statuses(c)[0].Revision
	if revision != del.Header.Revision {
		t.Fatalf("status revision %d, want the delete's %d", revision, del.Header.Revision)
	}
	if kept, err := a.HistoryKept(c, revision); err != nil || !kept {
		t.Fatalf("history kept before compacting: %v (%v)", kept, err)
	}
	if err := a.CompactHistory(c, revision); err != nil {
		t.Fatal(err)
	}
	if kept, err := a.HistoryKept(c, revision); err != nil || kept {
		t.Fatalf("history kept after compacting: %v (%v)", kept, err)
	}
	if err := a.CompactHistory(c, revision); err != nil {
		t.Fatalf("compacting the same revision again: %v", err)
	}
	compacted := a.Statuses(c)[0]
	if compacted.DBSizeInUse > quota/4 || compacted.DBSize < quota*9/10 {
		t.Fatalf("after compaction: file %d, in use %d: want a full file mostly free", compacted.DBSize, compacted.DBSizeInUse)
	}
	if err := a.Defragment(c, compacted.Endpoint); err != nil {
		t.Fatal(err)
	}
	defragmented := a.Statuses(c)[0]
	if defragmented.DBSize > quota/4 {
		t.Fatalf("after defragmentation: file %d, in use %d", defragmented.DBSize, defragmented.DBSizeInUse)
	}
	if _, err := cli.Put(c, "after", "x"); err == nil {
		t.Fatal("a write went through while NOSPACE was armed")
	}
	disarmed, err := a.DisarmNoSpace(c)
	if err != nil || disarmed != 1 {
		t.Fatalf("disarmed %d alarms: %v", disarmed, err)
	}
	if _, err := cli.Put(c, "after", "x"); err != nil {
		t.Fatalf("a write after NOSPACE was disarmed: %v", err)
	}
	if alarms, err := a.Alarms(c); err != nil || len(alarms) != 0 {
		t.Fatalf("alarms after disarming: %+v (%v)", alarms, err)
	}
}

func TestIsMomentary(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("adding learner x: %w", rpctypes.ErrUnhealthy), true},
		{rpctypes.ErrGRPCUnhealthy, true},
		{fmt.Errorf("removing member 1: %w", rpctypes.ErrGRPCLeaderChanged), true},
		{fmt.Errorf("adding learner x: %w", rpctypes.ErrGRPCTooManyLearners), false},
		{errors.New("creating pod x: exceeded quota"), false},
		{nil, false},
	} {
		if got := etcdadmin.IsMomentary(tt.err); got != tt.want {
			t.Errorf("IsMomentary(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestRemoveDeadMemberAmongTheEndpoints: the operator still asks a member
// whose node stopped reporting (its etcd may run), so the dead member's
// endpoint is among the client's when it is removed. Its status call waits
// for the connection until the context ends; with the removal's own
// timeout (the operator's 10 s) that left no time for the removal itself,
// on every pass.
func TestRemoveDeadMemberAmongTheEndpoints(t *testing.T) {
	t.Parallel()
	ms := startCluster(t)
	c := ctx(t)
	a := dial(t, ms...)
	before, err := a.Members(c)
	if err != nil {
		t.Fatal(err)
	}
	var deadID uint64
	for _, m := range before {
		if m.Name == ms[2].name {
			deadID = m.ID
		}
	}
	ms[2].stop()
	eventually(t, c, "remove the dead member within the operator's call timeout", func() error {
		call, cancel := context.WithTimeout(c, 10*time.Second)
		defer cancel()
		return a.Remove(call, deadID)
	})
}
