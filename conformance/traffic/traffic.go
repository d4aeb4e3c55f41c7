// Package traffic drives concurrent put/get clients against etcd and
// records every operation at the client boundary into a history.
package traffic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Config shapes the load.
type Config struct {
	Endpoints []string
	// Clients is the number of concurrent clients, each with one request
	// in flight at a time.
	Clients int
	// Keys is the number of shared keys the clients write and read.
	Keys int
	// Rate is the total operations per second across all clients.
	Rate int
	// RequestTimeout bounds each request (clientv3 retries inside it).
	RequestTimeout time.Duration
	// KeyPrefix namespaces the keys.
	KeyPrefix string
	// FinalReadAttempts bounds how often a final read of a key is retried.
	FinalReadAttempts int
}

// Validate reports bad settings with the flag-like field name.
func (c Config) Validate() error {
	var errs []error
	if len(c.Endpoints) == 0 {
		errs = append(errs, errors.New("endpoints: at least one is required"))
	}
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("clients: must be at least 1, got %d", c.Clients))
	}
	if c.Keys < 1 {
		errs = append(errs, fmt.Errorf("keys: must be at least 1, got %d", c.Keys))
	}
	if c.Rate < 1 {
		errs = append(errs, fmt.Errorf("rate: must be at least 1 operation per second, got %d", c.Rate))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request-timeout: must be positive, got %s", c.RequestTimeout))
	}
	return errors.Join(errs...)
}

// Recorder collects operations with times relative to its creation. Go's
// time.Since uses the monotonic clock, so times never go backwards.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []history.Operation
	puts  int
}

// NewRecorder starts the clock.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }

func (r *Recorder) add(op history.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	if op.Kind == history.Put && op.Succeeded() {
		r.puts++
	}
}

// SuccessfulPuts counts acknowledged writes so far.
func (r *Recorder) SuccessfulPuts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.puts
}

// Len is the number of recorded operations.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// History returns a copy of what was recorded.
func (r *Recorder) History() history.History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return history.History{Operations: append([]history.Operation(nil), r.ops...)}
}

// Run drives the clients until ctx is cancelled, then reads every key once
// more (the final reads that expose lost writes) and returns.
func Run(ctx context.Context, cfg Config, rec *Recorder) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.RequestTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer func() { _ = cli.Close() }()

	interval := time.Duration(int64(time.Second) * int64(cfg.Clients) / int64(cfg.Rate))
	var wg sync.WaitGroup
	for id := range cfg.Clients {
		wg.Go(func() { runClient(ctx, cli, cfg, rec, id, interval) })
	}
	wg.Wait()
	finalReads(cli, cfg, rec)
	return nil
}

func key(cfg Config, i int) string { return fmt.Sprintf("%sk%d", cfg.KeyPrefix, i) }

func runClient(ctx context.Context, cli *clientv3.Client, cfg Config, rec *Recorder, id int, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	rnd := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		k := key(cfg, rnd.IntN(cfg.Keys))
		if rnd.IntN(2) == 0 {
			put(cli, cfg, rec, id, k, fmt.Sprintf("c%d-%d", id, seq))
		} else {
			get(cli, cfg, rec, id, k, false)
		}
	}
}

// Requests get their own context, not the run's: cancelling the run must
// not turn in-flight requests into spurious client errors.
func put(cli *clientv3.Client, cfg Config, rec *Recorder, id int, k, v string) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
	defer cancel()
	op := history.Operation{Client: id, Kind: history.Put, Key: k, Value: v, Call: rec.now()}
	_, err := cli.Put(ctx, k, v)
	op.Return = rec.now()
	if err != nil {
		op.Error = err.Error()
	}
	rec.add(op)
}

func get(cli *clientv3.Client, cfg Config, rec *Recorder, id int, k string, final bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
	defer cancel()
	op := history.Operation{Client: id, Kind: history.Get, Key: k, Call: rec.now(), Final: final}
	resp, err := cli.Get(ctx, k)
	op.Return = rec.now()
	if err != nil {
		op.Error = err.Error()
	} else if len(resp.Kvs) > 0 {
		op.Found, op.Value = true, string(resp.Kvs[0].Value)
	}
	rec.add(op)
	return err == nil
}

func finalReads(cli *clientv3.Client, cfg Config, rec *Recorder) {
	attempts := max(cfg.FinalReadAttempts, 1)
	for i := range cfg.Keys {
		for range attempts {
			if get(cli, cfg, rec, cfg.Clients, key(cfg, i), true) {
				break
			}
		}
	}
}
