package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RaftLog is what one member says of its raft log: how far it has applied,
// how many raft snapshots it has saved (after each, etcd drops the log
// entries older than the snapshot's index less its catch-up entries, 5,000
// by default) and how many snapshots it has received from a leader (a
// follower gets one when the leader no longer holds the entries it lacks).
type RaftLog struct {
	// LastIndex is the index of the last entry in the member's log.
	LastIndex         uint64
	AppliedIndex      uint64
	SnapshotsSaved    float64
	SnapshotsReceived float64
}

// The members' own metrics the snapshot catch-up is judged by, the same
// names from etcd 3.4 to 3.7 (server/etcdserver/api/snap and rafthttp).
const (
	metricSnapshotsSaved    = "etcd_debugging_snap_save_total_duration_seconds"
	metricSnapshotsReceived = "etcd_network_snapshot_receive_success"
)

// RaftLogOf asks a member pod, through a port-forward to its client port,
// for its status (the applied index) and its metrics (etcd serves
// /metrics on the client port: plain or TLS, as the cluster's clients).
func (c *EtcdCluster) RaftLogOf(ctx context.Context, pod string) (RaftLog, error) {
	local, stop, err := c.forwardToMember(pod)
	if err != nil {
		return RaftLog{}, err
	}
	defer stop()
	cfg := c.ClientConfig(local)
	cli, err := clientv3.New(cfg)
	if err != nil {
		return RaftLog{}, err
	}
	defer func() { _ = cli.Close() }()
	sctx, cancel := context.WithTimeout(ctx, probeTimeout)
	status, err := cli.Status(sctx, cfg.Endpoints[0])
	cancel()
	if err != nil {
		return RaftLog{}, fmt.Errorf("status of %s: %w", pod, err)
	}
	endpoint := cfg.Endpoints[0]
	if !strings.HasPrefix(endpoint, "https://") {
		endpoint = "http://" + endpoint
	}
	client := http.DefaultClient
	if cfg.TLS != nil {
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: cfg.TLS}}
	}
	families, err := scrapeWith(ctx, client, endpoint+"/metrics")
	if err != nil {
		return RaftLog{}, fmt.Errorf("metrics of %s: %w", pod, err)
	}
	return RaftLog{
		LastIndex:         status.RaftIndex,
		AppliedIndex:      status.RaftAppliedIndex,
		SnapshotsSaved:    families.Sum(metricSnapshotsSaved),
		SnapshotsReceived: families.Sum(metricSnapshotsReceived),
	}, nil
}

// Sum adds up every series of a counter or histogram family (a
// histogram's sample counts); 0 when the family is absent, as a counter
// nothing has touched yet.
func (f MetricFamilies) Sum(name string) float64 {
	fam, ok := f[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// rewriteKeys is how many keys WriteThrough cycles over: the raft log
// grows by one entry a write whatever the key, and few keys keep the
// database small (each overwrite is a revision until compaction).
const rewriteKeys = 1000

// writeConnections is how many port-forwards, each with its own client,
// WriteThrough spreads its writers over: one stream through the API
// server and the kubelet carries a few hundred writes a second.
const writeConnections = 4

// WriteThrough writes small values under prefix through one member pod,
// from writers clients at once, in rounds of batch writes, calling done
// after each round until it says to stop (or returns an error). It returns
// how many writes were acknowledged. It makes raft log entries fast: a
// client of the cluster writing for the check, not traffic judged.
func (c *EtcdCluster) WriteThrough(ctx context.Context, pod, prefix string, writers, batch int, done func(written int) (bool, error)) (int, error) {
	clients := make([]*clientv3.Client, writeConnections)
	for i := range clients {
		cli, closeClient, err := c.memberClient(pod)
		if err != nil {
			return 0, err
		}
		defer closeClient()
		clients[i] = cli
	}
	var written atomic.Int64
	for round := 0; ; round++ {
		var (
			wg       sync.WaitGroup
			next     atomic.Int64
			mu       sync.Mutex
			firstErr error
		)
		for w := range writers {
			cli := clients[w%len(clients)]
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(batch) {
						return
					}
					n := int64(round*batch) + i
					pctx, cancel := context.WithTimeout(ctx, probeTimeout)
					_, err := cli.Put(pctx, fmt.Sprintf("%s%04d", prefix, n%rewriteKeys), fmt.Sprintf("write %d", n))
					cancel()
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("write %d through %s: %w", n, pod, err)
						}
						mu.Unlock()
						return
					}
					written.Add(1)
				}
			})
		}
		wg.Wait()
		if firstErr != nil {
			return int(written.Load()), firstErr
		}
		stop, err := done(int(written.Load()))
		if err != nil || stop {
			return int(written.Load()), err
		}
	}
}
