package traffic

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// rewatchBackoff is the wait before resuming a stream that ended for any
// reason but a compaction: a member that refuses it (no leader) would
// otherwise be asked again at once, in a loop.
const rewatchBackoff = 200 * time.Millisecond

// watchers are the watch clients of one run. They start before the
// clients, and outlive them until they have seen the last acknowledged
// put, so their streams can be checked against every write.
type watchers struct {
	wg      sync.WaitGroup
	started sync.WaitGroup
	// stopping is closed when traffic stopped; target is then the
	// revision of the last acknowledged put.
	stopping chan struct{}
	target   atomic.Int64
}

// startWatchers runs one watcher per client until ctx ends or finish.
func startWatchers(ctx context.Context, cfg Config, clis []*clientv3.Client, rec *Recorder) *watchers {
	ws := &watchers{stopping: make(chan struct{})}
	for i, cli := range clis {
		// The first resumes are spread over the interval, so the watchers
		// do not all resume at once.
		w := &watcher{cli: cli, cfg: cfg, rec: rec, id: i, stopping: ws.stopping, target: &ws.target,
			resumeAfter: cfg.WatchResumeEvery * time.Duration(i+1) / time.Duration(len(clis))}
		ws.started.Add(1)
		ws.wg.Go(func() { w.run(ctx, ws.started.Done) })
	}
	return ws
}

// awaitStarted waits until every watcher knows the revision it starts
// from, for at most timeout: traffic runs even if the cluster is slow to
// answer, and the watchers then miss the first writes, not the run.
func (ws *watchers) awaitStarted(timeout time.Duration) {
	done := make(chan struct{})
	go func() { ws.started.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// finish tells the watchers traffic stopped at revision last and waits
// until each has seen it, or for budget at most (then stop ends them).
func (ws *watchers) finish(last int64, budget time.Duration, stop context.CancelFunc) {
	ws.target.Store(last)
	close(ws.stopping)
	t := time.AfterFunc(budget, stop)
	defer t.Stop()
	ws.wg.Wait()
}

// watcher is one watch client, as an informer is: it watches every key
// under the prefix from the revision current when it started and, every
// WatchResumeEvery, ends its stream and resumes from the revision after
// the last event it got. It records every request and response.
type watcher struct {
	cli *clientv3.Client
	cfg Config
	rec *Recorder
	id  int
	// resumeAfter is how long the current stream lasts (0: until it ends).
	resumeAfter time.Duration
	// next is the revision the next stream asks: the one after the last
	// event got, or the compact revision after ErrCompacted.
	next int64
	// seen is the highest revision the streams vouched for: an event's, a
	// progress notification's, or the one before a compaction told of.
	seen int64
	// stopping is closed when traffic stopped (nil once the watcher read
	// target): from then on the watcher ends when seen reaches target.
	stopping <-chan struct{}
	target   *atomic.Int64
}

func (w *watcher) run(ctx context.Context, started func()) {
	started = sync.OnceFunc(started)
	defer started()
	rev, ok := w.currentRevision(ctx)
	if !ok {
		return
	}
	started()
	w.next, w.seen = rev+1, rev
	for resume := false; ; resume = true {
		w.rec.addWatch(history.WatchRecord{Watcher: w.id, Start: &history.WatchStart{Prefix: w.cfg.KeyPrefix, Revision: w.next, Resume: resume}})
		if !w.follow(ctx) {
			return
		}
	}
}

// currentRevision asks the cluster's revision until a member answers or
// ctx ends. The read is linearizable: every write acknowledged before it
// is at or below the revision.
func (w *watcher) currentRevision(ctx context.Context) (int64, bool) {
	for {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		resp, err := w.cli.Get(rctx, w.cfg.KeyPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err == nil {
			return resp.Header.GetRevision(), true
		}
		if !pause(ctx, rewatchBackoff) {
			return 0, false
		}
	}
}

// follow reads one stream from w.next; it reports whether to resume.
// The stream requires a leader, as kube-apiserver's watches do: a member
// cut off from the others ends it instead of leaving it silent.
func (w *watcher) follow(ctx context.Context) (resume bool) {
	sctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := w.cli.Watch(sctx, w.cfg.KeyPrefix, clientv3.WithPrefix(), clientv3.WithRev(w.next), clientv3.WithProgressNotify())
	var resumeNow <-chan time.Time
	if w.resumeAfter > 0 {
		t := time.NewTimer(w.resumeAfter)
		defer t.Stop()
		resumeNow, w.resumeAfter = t.C, w.cfg.WatchResumeEvery
	}
	for {
		if w.stopping == nil && w.seen >= w.target.Load() {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-w.stopping:
			w.stopping = nil
		case <-resumeNow:
			return true
		case resp, ok := <-ch:
			switch {
			case !ok:
				return pause(ctx, rewatchBackoff)
			case resp.Canceled && resp.CompactRevision == 0:
				w.observe(resp)
				return pause(ctx, rewatchBackoff)
			case resp.Canceled:
				w.observe(resp)
				return true
			}
			w.observe(resp)
		}
	}
}

// observe records a response and moves next and seen past it.
func (w *watcher) observe(resp clientv3.WatchResponse) {
	r := history.WatchResponse{Revision: resp.Header.GetRevision(), Progress: resp.IsProgressNotify(), Canceled: resp.Canceled, CompactRevision: resp.CompactRevision}
	if err := resp.Err(); err != nil {
		r.Error = err.Error()
	}
	for _, ev := range resp.Events {
		typ := history.EventPut
		if ev.Type == mvccpb.DELETE {
			typ = history.EventDelete
		}
		r.Events = append(r.Events, history.WatchEvent{Type: typ, Key: string(ev.Kv.Key), Value: string(ev.Kv.Value), ModRevision: ev.Kv.ModRevision, CreateRevision: ev.Kv.CreateRevision})
		w.next, w.seen = max(w.next, ev.Kv.ModRevision+1), max(w.seen, ev.Kv.ModRevision)
	}
	if r.Progress {
		w.seen = max(w.seen, r.Revision)
	}
	if r.CompactRevision > w.next {
		// What lay below the compact revision is gone, and the stream was
		// told: it resumes from there.
		w.next, w.seen = r.CompactRevision, max(w.seen, r.CompactRevision-1)
	}
	w.rec.addWatch(history.WatchRecord{Watcher: w.id, Response: &r})
}

// pause waits d unless ctx ends first; it reports whether ctx is still on.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
