package framework

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// QuorumSample is one look at how many voting members could serve a
// linearizable read, against how many a quorum needs.
type QuorumSample struct {
	At time.Time `json:"at"`
	// Voters is the number of voting members in the member list (the last
	// one seen when no member answered).
	Voters int `json:"voters"`
	// Healthy counts the member pods that answered a linearizable read
	// through their own endpoint.
	Healthy int `json:"healthy"`
	// NotSampled says why the suite could not ask at all (the member pods
	// could not be listed): such a sample judges nothing, rather than
	// counting as no member healthy.
	NotSampled string `json:"notSampled,omitempty"`
}

// Quorum is the number of healthy voters a cluster of Voters needs.
func (s QuorumSample) Quorum() int { return s.Voters/2 + 1 }

// BelowQuorum reports a sample with fewer healthy voters than a quorum.
func (s QuorumSample) BelowQuorum() bool {
	return s.NotSampled == "" && s.Voters > 0 && s.Healthy < s.Quorum()
}

// Sampled counts the samples that asked the members.
func (q QuorumSamples) Sampled() int {
	n := 0
	for _, s := range q {
		if s.NotSampled == "" {
			n++
		}
	}
	return n
}

// QuorumSamples are a sampler's samples, oldest first.
type QuorumSamples []QuorumSample

// BelowQuorum are the samples with fewer healthy voters than a quorum.
func (q QuorumSamples) BelowQuorum() QuorumSamples {
	var out QuorumSamples
	for _, s := range q {
		if s.BelowQuorum() {
			out = append(out, s)
		}
	}
	return out
}

// MinHealthy is the fewest healthy voters seen, with that sample's voters.
func (q QuorumSamples) MinHealthy() (healthy, voters int) {
	healthy = -1
	for _, s := range q {
		if s.NotSampled != "" {
			continue
		}
		if healthy < 0 || s.Healthy < healthy {
			healthy, voters = s.Healthy, s.Voters
		}
	}
	return healthy, voters
}

// QuorumSampler samples a cluster's healthy voters in the background.
type QuorumSampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples QuorumSamples
	// probes keeps one port-forward and client per member pod across samples.
	probes map[string]*memberProbe
}

type memberProbe struct {
	cli   *clientv3.Client
	close func()
}

// StartQuorumSampler samples every interval until Stop. Each sample reads
// through every running member pod: a member that cannot reach a quorum
// cannot serve the read, so Healthy below Quorum is a cluster that lost
// its quorum at that moment, whatever its clients happened to send.
// voters is the number of voting members the caller made the cluster with:
// until a member list is read, samples are judged against it, so a cluster
// that has no quorum when sampling starts does not go unjudged.
func (c *EtcdCluster) StartQuorumSampler(ctx context.Context, interval time.Duration, voters int) *QuorumSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &QuorumSampler{cancel: cancel, done: make(chan struct{}), probes: map[string]*memberProbe{}}
	go func() {
		defer close(s.done)
		defer s.closeProbes(nil)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			sample := c.sampleQuorum(ctx, s, voters)
			if ctx.Err() != nil {
				return
			}
			voters = sample.Voters
			s.samples = append(s.samples, sample)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the samples.
func (s *QuorumSampler) Stop() QuorumSamples {
	s.cancel()
	<-s.done
	return s.samples
}

// sampleQuorum takes one sample; lastVoters stands in when no member answers.
func (c *EtcdCluster) sampleQuorum(ctx context.Context, s *QuorumSampler, lastVoters int) QuorumSample {
	sample := QuorumSample{At: time.Now(), Voters: lastVoters}
	pods, err := c.MemberPods(ctx)
	if err != nil {
		sample.NotSampled = "listing the member pods: " + err.Error()
		return sample
	}
	running := map[string]bool{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == "Running" {
			running[p.Name] = true
		}
	}
	s.closeProbes(running)
	var mu sync.Mutex
	var wg sync.WaitGroup
	memberListed := false
	for name := range running {
		probe, err := s.probe(c, name)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			// A linearizable read needs the member's leader and a quorum.
			if _, err := probe.cli.Get(rctx, "etcdproof/quorum-probe"); err != nil {
				return
			}
			ml, err := probe.cli.MemberList(rctx)
			mu.Lock()
			defer mu.Unlock()
			sample.Healthy++
			if err == nil && !memberListed {
				memberListed = true
				sample.Voters = 0
				for _, m := range ml.Members {
					if !m.IsLearner {
						sample.Voters++
					}
				}
			}
		}()
	}
	wg.Wait()
	return sample
}

// probe is the client of a member pod, opened on first use.
func (s *QuorumSampler) probe(c *EtcdCluster, pod string) (*memberProbe, error) {
	if p, ok := s.probes[pod]; ok {
		return p, nil
	}
	cli, closeClient, err := c.memberClient(pod)
	if err != nil {
		return nil, err
	}
	p := &memberProbe{cli: cli, close: closeClient}
	s.probes[pod] = p
	return p, nil
}

// closeProbes closes the probes of pods not in keep (all of them for nil).
func (s *QuorumSampler) closeProbes(keep map[string]bool) {
	for name, p := range s.probes {
		if !keep[name] {
			p.close()
			delete(s.probes, name)
		}
	}
}
