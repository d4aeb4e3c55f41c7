package etcdtest

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/etcdproof/etcdproof/internal/loopback"
)

// Cluster is n etcd members on loopback, in this process.
type Cluster struct {
	Members   []*embed.Etcd
	Endpoints []string
	stop      []func()
}

// Stop stops member i gracefully: a leader hands leadership over first.
func (c *Cluster) Stop(i int) { c.stop[i]() }

// Crash stops member i's raft server at once, like a killed process: a
// leader does not hand over, so the others elect a new one after the
// election timeout. Its listeners stay open until the test ends.
func (c *Cluster) Crash(i int) { c.Members[i].Server.HardStop() }

// StartCluster runs an n-member cluster and waits until it has a leader;
// the members stop when the test ends. Each configure function may change
// every member's configuration before it starts.
func StartCluster(tb testing.TB, n int, configure ...func(*embed.Config)) *Cluster {
	tb.Helper()
	cfgs := make([]*embed.Config, n)
	var initial []string
	c := &Cluster{}
	for i := range cfgs {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = tb.TempDir()
		cfg.LogLevel = "error"
		client, peer := loopback.URL(tb), loopback.URL(tb)
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		initial = append(initial, cfg.Name+"="+peer.String())
		c.Endpoints = append(c.Endpoints, client.String())
		for _, f := range configure {
			f(cfg)
		}
		cfgs[i] = cfg
	}
	for _, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			tb.Fatalf("start etcd %s: %v", cfg.Name, err)
		}
		stop := sync.OnceFunc(e.Close)
		tb.Cleanup(stop)
		c.Members, c.stop = append(c.Members, e), append(c.stop, stop)
	}
	for _, e := range c.Members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			tb.Fatalf("etcd failed: %v", err)
		case <-time.After(time.Minute):
			tb.Fatal("etcd cluster not ready within a minute")
		}
	}
	return c
}

// Leader is the index of the member that leads, or -1.
func (c *Cluster) Leader() int {
	for i, e := range c.Members {
		if e.Server.Leader() == e.Server.MemberID() {
			return i
		}
	}
	return -1
}
