package desired_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// probedMember is a real etcd server on loopback, with the metrics listener
// the member pods' probes use.
type probedMember struct {
	name, peerURL, clientURL, metricsURL string
	etcd                                 *embed.Etcd
}

func parseURL(t *testing.T, s string) []url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return []url.URL{*u}
}

func newProbedMember(t *testing.T, name string) *probedMember {
	return &probedMember{name: name, peerURL: loopback.HTTP(t), clientURL: loopback.HTTP(t), metricsURL: loopback.HTTP(t)}
}

func (m *probedMember) start(t *testing.T, initialCluster, state string) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = t.TempDir()
	cfg.ListenPeerUrls = parseURL(t, m.peerURL)
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.ListenClientUrls = parseURL(t, m.clientURL)
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenMetricsUrls = parseURL(t, m.metricsURL)
	cfg.InitialCluster = initialCluster
	cfg.InitialClusterToken = "probes-test"
	cfg.ClusterState = state
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting member %s: %v", m.name, err)
	}
	m.etcd = e
	t.Cleanup(m.stop)
}

func (m *probedMember) stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

// get returns the status code of a probe's GET, or an error when there is
// no answer within the probe's timeout.
func (m *probedMember) get(path string) (int, string, error) {
	hc := http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Get(m.metricsURL + path)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

func waitUntil(t *testing.T, ctx context.Context, what string, cond func() error) {
	t.Helper()
	var last error
	for {
		if last = cond(); last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func answers(m *probedMember, path string, want bool) func() error {
	return func() error {
		code, body, err := m.get(path)
		if ok := err == nil && code == http.StatusOK; ok != want {
			return fmt.Errorf("%s%s: code %d %q, error %v", m.name, path, code, body, err)
		}
		return nil
	}
}

// TestProbePathsOnRealMembers runs the etcd release this module builds with
// (go.mod) and checks the paths desired chooses for it: a voter is alive
// and ready, a caught-up learner alive but not ready (a disruption budget
// must not count it); once the learner has lost its leader it stays alive
// (no restart).
func TestProbePathsOnRealMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd members")
	}
	paths := desired.HealthPathsFor(version.Version)
	t.Logf("etcd %s: alive %s, ready %s", version.Version, paths.Alive, paths.Ready)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	voter := newProbedMember(t, "voter")
	voter.start(t, voter.name+"="+voter.peerURL, "new")
	select {
	case <-voter.etcd.Server.ReadyNotify():
	case <-ctx.Done():
		t.Fatal("the voter did not start")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{voter.clientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}

	learner := newProbedMember(t, "learner")
	var learnerID uint64
	waitUntil(t, ctx, "add the learner", func() error {
		resp, err := cli.MemberAddAsLearner(ctx, []string{learner.peerURL})
		if err == nil {
			learnerID = resp.Member.ID
		}
		return err
	})
	learner.start(t, voter.name+"="+voter.peerURL+","+learner.name+"="+learner.peerURL, "existing")

	waitUntil(t, ctx, voter.name+" alive", answers(voter, paths.Alive, true))
	waitUntil(t, ctx, voter.name+" ready", answers(voter, paths.Ready, true))
	waitUntil(t, ctx, learner.name+" alive", answers(learner, paths.Alive, true))
	members, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members.Members {
		if m.ID == learnerID && !m.IsLearner {
			t.Fatal("the learner was promoted; the test needs it to stay a learner")
		}
	}
	if paths.Ready == desired.PathReadyz {
		// A caught-up learner (ready but for the learner check) is not
		// ready: a PodDisruptionBudget must not count its pod as a healthy
		// member (the drain check).
		waitUntil(t, ctx, learner.name+" caught up", answers(learner, desired.PathReadyz+"?exclude=non_learner", true))
		if err := answers(learner, paths.Ready, false)(); err != nil {
			t.Errorf("%s on a learner: %v", paths.Ready, err)
		}
	} else {
		waitUntil(t, ctx, learner.name+" ready", answers(learner, paths.Ready, true))
	}

	// Without its leader the learner still serves local reads: liveness
	// keeps it, readiness drops it.
	voter.stop()
	waitUntil(t, ctx, "learner not ready without a leader", answers(learner, paths.Ready, false))
	if err := answers(learner, paths.Alive, true)(); err != nil && paths.Alive != desired.PathHealth {
		t.Errorf("learner without a leader: %v", err)
	}
}
