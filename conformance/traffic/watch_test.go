package traffic

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// watchCounts are what a recorder's watch records show so far.
type watchCounts struct{ resumes, progress, compactions int }

func countWatches(h history.History) watchCounts {
	var c watchCounts
	for _, rec := range h.Watches {
		switch {
		case rec.Start != nil && rec.Start.Resume:
			c.resumes++
		case rec.Response != nil && rec.Response.Progress:
			c.progress++
		case rec.Response != nil && rec.Response.CompactRevision != 0:
			c.compactions++
		}
	}
	return c
}

// Real watch streams from a 3-member cluster, resumed many times and
// idle now and then (so the members send progress notifications), keep
// every promise etcd makes, and carry every acknowledged put.
func TestWatchersOnRealClusterKeepEtcdPromises(t *testing.T) {
	c := etcdtest.StartCluster(t, 3, func(cfg *embed.Config) { cfg.WatchProgressNotifyInterval = 100 * time.Millisecond })
	cfg := testConfig(c.Endpoints...)
	cfg.Rate, cfg.Watchers, cfg.WatchResumeEvery = 30, 2, 250*time.Millisecond
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	waitFor(t, "40 puts, 6 resumes and a progress notification", func() bool {
		w := countWatches(rec.History())
		return rec.SuccessfulPuts() >= 40 && w.resumes >= 6 && w.progress >= 1
	})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	revisions := map[int64]bool{}
	acked := 0
	for _, op := range h.Operations {
		if op.Kind == history.Put && op.Succeeded() {
			if op.Revision <= 0 || revisions[op.Revision] {
				t.Errorf("put %+v: want a revision of its own", op)
			}
			revisions[op.Revision] = true
			acked++
		}
	}
	r := validate.Validate(h, validate.Options{Timeout: time.Minute})
	if !r.Passed() || r.Watch == nil {
		t.Fatalf("history of %d operations and %d watch records failed: %q", len(h.Operations), len(h.Watches), r.Failures)
	}
	s := r.Watch.Stats
	t.Logf("watch stats: %+v over %s", s, r.Stats.Duration)
	// Each watcher starts before the first put and catches up with the
	// last, so each gets every acknowledged put.
	if s.Watchers != 2 || s.Events < 2*acked || s.Resumes < 6 || s.ProgressNotifications < 1 {
		t.Errorf("watch stats %+v, want 2 watchers with %d events each, 6 resumes and a progress notification", s, acked)
	}
}

// A compaction of the revisions a resuming watcher still needs makes its
// resume fail with ErrCompacted: what it could no longer get it was told
// about, so the streams still pass.
func TestCompactionDuringTrafficIsToldNotLost(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	cfg := testConfig(c.Endpoints...)
	cfg.Clients, cfg.Rate, cfg.Watchers, cfg.WatchResumeEvery = 8, 100_000, 2, 20*time.Millisecond
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	// Compact up to the latest revision, again and again, until a resume
	// was told.
	waitFor(t, "a watcher told its revision was compacted", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, "compaction-probe")
		if err != nil {
			t.Fatal(err)
		}
		// Nothing written since the last compaction: etcd says that
		// revision is compacted already.
		if _, err := cli.Compact(ctx, resp.Header.Revision); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			t.Fatal(err)
		}
		return countWatches(rec.History()).compactions >= 1
	})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	r := validate.Validate(h, validate.Options{Timeout: time.Minute})
	if !r.Passed() || r.Watch == nil {
		t.Fatalf("history of %d operations and %d watch records failed: %q", len(h.Operations), len(h.Watches), r.Failures)
	}
	t.Logf("watch stats: %+v", r.Watch.Stats)
	if r.Watch.Stats.Compactions < 1 || r.Watch.Stats.Violations != 0 {
		t.Errorf("watch stats %+v, want a compaction told and no violation", r.Watch.Stats)
	}
}
