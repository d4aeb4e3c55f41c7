// Package traffic drives concurrent put/get clients against etcd and
// records every operation at the client boundary into a history.
package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Each logical client behaves as a well-configured etcd client of its
// own, so that what the checks measure is the cluster, not a connection
// the client never gave up. Clients reach a cluster through its client
// Service: one address, so one connection per client. When the member
// behind a connection dies with its node, nothing closes it: with no
// keepalive every request waits on it for its deadline, for minutes, and a
// redial that the Service sends to the dead member again waits gRPC's
// default 20 s connect timeout. The node-loss check once failed the
// reference on a 22.9 s write gap that was exactly this, with all eight
// clients on one connection.
const (
	// keepAliveTime is gRPC's floor for a client (it raises anything
	// lower to 10 s); etcd's own floor is 5 s (--grpc-keepalive-min-time).
	keepAliveTime = 10 * time.Second
	// keepAliveTimeout leaves a slow but live member time to answer a ping.
	keepAliveTimeout = 2 * time.Second
	// connectTimeout bounds one connection attempt.
	connectTimeout = 2 * time.Second
)

// reconnectBackoff redials at once and soon again: the next attempt
// through a Service may reach a live member.
var reconnectBackoff = backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}

// Run drives the clients and the watchers until ctx is cancelled, then
// reads every key back (the final reads that expose lost writes), lets the
// watchers see the last acknowledged put, and returns.
func Run(ctx context.Context, cfg Config, rec *Recorder) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// One connection per logical client, as separate application
	// instances have: a connection stuck on a member that died leaves
	// the others writing, so the write gap measures the cluster. The
	// final reads and each watcher have one too.
	clis := make([]*clientv3.Client, cfg.Clients+1+cfg.Watchers)
	defer func() {
		for _, cli := range clis {
			if cli != nil {
				_ = cli.Close()
			}
		}
	}()
	for i := range clis {
		cli, err := newEtcdClient(cfg)
		if err != nil {
			return fmt.Errorf("etcd client: %w", err)
		}
		clis[i] = cli
	}
	watchCtx, stopWatchers := context.WithCancel(context.Background())
	defer stopWatchers()
	ws := startWatchers(watchCtx, cfg, clis[cfg.Clients+1:], rec)
	ws.awaitStarted(cfg.RequestTimeout)

	interval := time.Duration(int64(time.Second) * int64(cfg.Clients) / int64(cfg.Rate))
	var wg sync.WaitGroup
	for id := range cfg.Clients {
		c := client{cli: clis[id], cfg: cfg, rec: rec, id: id}
		wg.Go(func() { c.run(ctx, interval) })
	}
	wg.Wait()
	// The final reads share a connection of their own, made before any
	// fault: it may be the one stuck, and they retry for that. Meanwhile
	// the watchers catch up with the last acknowledged put.
	wg.Go(func() { ws.finish(rec.lastPutRevision(), cfg.FinalReadBudget, stopWatchers) })
	for i := range cfg.Keys {
		c := client{cli: clis[cfg.Clients], cfg: cfg, rec: rec, id: cfg.Clients + i}
		wg.Go(func() { c.finalRead(key(cfg, i)) })
	}
	wg.Wait()
	return nil
}

func newEtcdClient(cfg Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		TLS:                  cfg.TLS,
		DialTimeout:          cfg.RequestTimeout,
		DialKeepAliveTime:    keepAliveTime,
		DialKeepAliveTimeout: keepAliveTimeout,
		DialOptions: []grpc.DialOption{
			grpc.WithStatsHandler(sentTracker{}),
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnectBackoff, MinConnectTimeout: connectTimeout}),
		},
		Logger: zap.NewNop(),
	})
}

func key(cfg Config, i int) string { return fmt.Sprintf("%sk%d", cfg.KeyPrefix, i) }

// client is one logical client: one request in flight at a time.
type client struct {
	cli *clientv3.Client
	cfg Config
	rec *Recorder
	id  int
}

// run issues a random put or get per tick. A request that failed
// definitely is retried once, after RetryBackoff, as its own operation
// marked Retry: the history then shows both the raw failure and what an
// application retrying such failures once would have seen. Indeterminate
// failures are not retried: the request may have been applied.
func (c client) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	rnd := rand.New(rand.NewPCG(uint64(c.id), uint64(time.Now().UnixNano())))
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		op := history.Operation{Client: c.id, Kind: history.Get, Key: key(c.cfg, rnd.IntN(c.cfg.Keys))}
		if rnd.IntN(2) == 0 {
			op.Kind, op.Value = history.Put, fmt.Sprintf("c%d-%d", c.id, seq)
		}
		if c.do(op, c.cfg.RequestTimeout).Class() != history.Definite {
			continue
		}
		time.Sleep(c.cfg.RetryBackoff)
		op.Retry = true
		if op.Kind == history.Put {
			op.Value += "-retry" // values stay unique
		}
		c.do(op, c.cfg.RequestTimeout)
	}
}

// finalRead reads a key until it succeeds or FinalReadBudget is spent,
// backing off between attempts.
func (c client) finalRead(k string) {
	deadline := time.Now().Add(c.cfg.FinalReadBudget)
	backoff := 100 * time.Millisecond
	for {
		op := history.Operation{Client: c.id, Kind: history.Get, Key: k, Final: true}
		if c.do(op, min(c.cfg.RequestTimeout, time.Until(deadline))).Succeeded() {
			return
		}
		if time.Until(deadline) <= backoff {
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// do sends op (a put of op.Value or a get), records it with its outcome
// and returns the record. Requests get their own context, not the run's:
// cancelling the run must not turn in-flight requests into spurious
// client errors.
func (c client) do(op history.Operation, timeout time.Duration) history.Operation {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, sent := trackSent(ctx)
	op.Call = c.rec.now()
	var err error
	if op.Kind == history.Put {
		var resp *clientv3.PutResponse
		if resp, err = c.cli.Put(ctx, op.Key, op.Value); err == nil {
			op.Term, op.Revision = resp.Header.GetRaftTerm(), resp.Header.GetRevision()
		}
	} else {
		var resp *clientv3.GetResponse
		if resp, err = c.cli.Get(ctx, op.Key); err == nil {
			op.Term = resp.Header.GetRaftTerm()
			if len(resp.Kvs) > 0 {
				op.Found, op.Value = true, string(resp.Kvs[0].Value)
			}
		}
	}
	op.Return = c.rec.now()
	if err != nil {
		op.Error, op.ErrorClass = err.Error(), classify(err, sent.Load())
	}
	c.rec.add(op)
	return op
}
