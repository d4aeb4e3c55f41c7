package framework

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
)

// The sampler tells a quorum running from a quorum lost, on real members:
// all three run and serve; with the leader stopped the two left still
// run; with a second member stopped, one of three runs and the sample is
// below quorum. A pod whose port cannot be
// reached is not counted as stopped.
func TestQuorumSamplerOnRealMembers(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	c, members, ports := membersBehindForwards(t)
	ctx := context.Background()
	c.forward = func(pod string) (int, func(), error) { return ports[pod], func() {}, nil }
	s := &QuorumSampler{probes: map[string]*memberProbe{}}
	defer s.closeProbes(nil)

	if got := c.sampleQuorum(ctx, s, 3); got.Voters != 3 || got.Running != 3 || got.Healthy != 3 || got.BelowQuorum() {
		t.Errorf("all members up: %+v, want 3 of 3 running and healthy", got)
	}
	// A phase shorter than the period (create's) still gets its first
	// sample: stopping right away finishes it.
	if got := c.StartQuorumSampler(ctx, time.Hour, 3).Stop(); got.Sampled() != 1 {
		t.Errorf("stopped at once: %d samples asked, want the first one", got.Sampled())
	}
	leader := members.Leader()
	members.Stop(leader)
	if got := c.sampleQuorum(ctx, s, 3); got.Running != 2 || got.BelowQuorum() {
		t.Errorf("leader stopped: %+v, want 2 of 3 running, not below quorum", got)
	}
	members.Stop((leader + 1) % 3)
	got := c.sampleQuorum(ctx, s, 3)
	if got.Running != 1 || !got.BelowQuorum() {
		t.Errorf("two of three stopped: %+v, want 1 of 3 running, below quorum", got)
	}
	// No port-forward to one of them: it is not known to be stopped.
	c.forward = func(pod string) (int, func(), error) {
		if pod == fmt.Sprintf("demo-%d", leader) {
			return 0, nil, fmt.Errorf("error upgrading connection: unable to upgrade connection: pod not found")
		}
		return ports[pod], func() {}, nil
	}
	s.closeProbes(nil)
	if got := c.sampleQuorum(ctx, s, 3); got.Unasked != 1 || got.BelowQuorum() {
		t.Errorf("one member unreachable: %+v, want it unasked and the sample not judged below quorum", got)
	}
}

// A port-forward that breaks under a member that runs is the suite's
// trouble, not the member's: the sampler asks again through a new one
// before it counts the member as stopped (the reference-as-coreos
// operator-crash check once failed on "0 of 4 voters running" while its
// clients' writes went on, every forward broken at once).
func TestQuorumSamplerAsksAgainThroughANewForward(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	c, _, ports := membersBehindForwards(t)
	ctx := context.Background()
	broken := brokenForwardPort(t)
	opened := map[string]int{}
	c.forward = func(pod string) (int, func(), error) {
		opened[pod]++
		if opened[pod] == 1 {
			return broken, func() {}, nil
		}
		return ports[pod], func() {}, nil
	}
	s := &QuorumSampler{probes: map[string]*memberProbe{}}
	defer s.closeProbes(nil)
	if got := c.sampleQuorum(ctx, s, 3); got.Running != 3 || got.BelowQuorum() {
		t.Errorf("every first forward broken: %+v, want 3 of 3 running once asked again", got)
	}
	// Every forward broken, first and second: the suite could not look,
	// which says nothing of the members (not sampled, not below quorum);
	// one member silent among others that answer still counts.
	c.forward = func(string) (int, func(), error) { return broken, func() {}, nil }
	s.closeProbes(nil)
	if got := c.sampleQuorum(ctx, s, 3); got.NotSampled == "" || got.BelowQuorum() {
		t.Errorf("no member answers through any forward: %+v, want not sampled", got)
	}
	c.forward = func(pod string) (int, func(), error) {
		if pod == "demo-0" {
			return broken, func() {}, nil
		}
		return ports[pod], func() {}, nil
	}
	s.closeProbes(nil)
	if got := c.sampleQuorum(ctx, s, 3); got.NotSampled != "" || got.Running != 2 {
		t.Errorf("one member silent: %+v, want it counted as not running, 2 of 3", got)
	}
}

// membersBehindForwards is a demo cluster on three real members, each
// with a running member pod demo-<i> and a forwarded local port (by pod).
func membersBehindForwards(t *testing.T) (*EtcdCluster, *etcdtest.Cluster, map[string]int) {
	t.Helper()
	e, c, members := demoClusterOnRealMembers(t)
	ports := map[string]int{}
	for i, endpoint := range members.Endpoints {
		name := fmt.Sprintf("demo-%d", i)
		ports[name] = forwardPort(t, endpoint)
		createRunningMemberPod(t, e, c, name)
	}
	return c, members, ports
}

// brokenForwardPort is a port whose connections close as soon as they
// open, as a port-forward whose stream the API server reset.
func brokenForwardPort(t *testing.T) int {
	return listenLocal(t, func(conn net.Conn) { _ = conn.Close() })
}
