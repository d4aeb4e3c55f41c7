package framework

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// QuorumSample is one look at how many voting members run, and how many
// could serve a linearizable read, against how many a quorum needs.
type QuorumSample struct {
	At time.Time `json:"at"`
	// Voters is the number of voting members in the member list (the last
	// one seen when no member answered).
	Voters int `json:"voters"`
	// Running counts the voters whose etcd answered its Status through
	// its own endpoint: a process that runs and votes, leader or not.
	Running int `json:"running"`
	// Healthy counts the member pods that answered a linearizable read
	// (it needs a leader and a quorum behind it): fewer than a quorum
	// while a quorum runs is an election.
	Healthy int `json:"healthy"`
	// Unasked counts the running member pods the suite could not reach
	// (no port-forward): whether they run is not known.
	Unasked int `json:"unasked,omitempty"`
	// NotSampled says why the suite could not ask at all (the member pods
	// could not be listed): such a sample judges nothing, rather than
	// counting as no member running.
	NotSampled string `json:"notSampled,omitempty"`
}

// Quorum is the number of voters a cluster of Voters needs running.
func (s QuorumSample) Quorum() int { return s.Voters/2 + 1 }

// BelowQuorum reports a sample with fewer running voters than a quorum,
// even counting every member the suite could not reach as running: the
// cluster had lost its quorum at that moment, whatever its clients
// happened to send. A sample taken before any member list was seen (no
// voters known) judges nothing.
func (s QuorumSample) BelowQuorum() bool {
	return s.NotSampled == "" && s.Voters > 0 && s.Running+s.Unasked < s.Quorum()
}

// Leaderless reports a sample with a quorum running but fewer than a
// quorum serving reads: an election was under way. etcd's raft bounds it
// (an election timeout and a vote); the leader changes the clients saw
// judge whether the operator caused too many.
func (s QuorumSample) Leaderless() bool {
	return s.NotSampled == "" && s.Voters > 0 && s.Running >= s.Quorum() && s.Healthy < s.Quorum()
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

// BelowQuorum are the samples with fewer running voters than a quorum.
func (q QuorumSamples) BelowQuorum() QuorumSamples {
	var out QuorumSamples
	for _, s := range q {
		if s.BelowQuorum() {
			out = append(out, s)
		}
	}
	return out
}

// Outside are the samples taken outside every window.
func (q QuorumSamples) Outside(windows []Window) QuorumSamples {
	var out QuorumSamples
	for _, s := range q {
		if !slices.ContainsFunc(windows, func(w Window) bool { return w.Contains(s.At) }) {
			out = append(out, s)
		}
	}
	return out
}

// Leaderless counts the samples taken during an election.
func (q QuorumSamples) Leaderless() int {
	n := 0
	for _, s := range q {
		if s.Leaderless() {
			n++
		}
	}
	return n
}

// MinRunning is the fewest running voters seen, with that sample's voters.
func (q QuorumSamples) MinRunning() (running, voters int) {
	running = -1
	for _, s := range q {
		if s.NotSampled != "" || s.Voters == 0 {
			continue
		}
		if running < 0 || s.Running < running {
			running, voters = s.Running, s.Voters
		}
	}
	return running, voters
}

// Window is a stretch of wall-clock time; an open window (To zero) has not
// ended.
type Window struct {
	From, To time.Time
}

// Contains reports whether t is in the window.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.From) && (w.To.IsZero() || !t.After(w.To))
}

// QuorumSampler samples a cluster's healthy voters in the background.
type QuorumSampler struct {
	stop    chan struct{}
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
// A sample under way when Stop is called is finished and kept, so even a
// phase shorter than interval has its first sample.
func (c *EtcdCluster) StartQuorumSampler(ctx context.Context, interval time.Duration, voters int) *QuorumSampler {
	s := &QuorumSampler{stop: make(chan struct{}), done: make(chan struct{}), probes: map[string]*memberProbe{}}
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
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the samples.
func (s *QuorumSampler) Stop() QuorumSamples {
	close(s.stop)
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
	names := make([]string, 0, len(running))
	for name := range running {
		names = append(names, name)
	}
	// A member that does not answer is asked again through a new
	// port-forward before it counts as stopped: a forward the API server
	// or kubelet reset is the suite's trouble, not the member's (all of a
	// sample's forwards once broke at once while the cluster served).
	silent := c.askMembersForQuorum(ctx, s, names, &sample)
	if len(silent) > 0 {
		silent = c.askMembersForQuorum(ctx, s, silent, &sample)
	}
	// Not one running member pod answered, twice: the suite's own path to
	// them (the API server, the kubelets' port-forwards) is stalled far
	// more likely than every etcd at once, and the clients in the cluster
	// judge that moment. Seen: "0 of 4 voters running" while in-cluster
	// clients' writes committed, in term 2 throughout.
	if len(silent) > 0 && len(silent) == len(names)-sample.Unasked {
		sample.NotSampled = fmt.Sprintf("none of the %d running member pods answered the suite through its port-forwards (twice, %s each)", len(silent), statusTimeout)
	}
	return sample
}

// askMembersForQuorum asks each named member pod, at once, through its
// probe (opened if need be), and adds what they said to sample. It returns
// the members whose etcd did not answer; their probes are closed, so the
// next ask opens new ones. A probe that cannot be opened counts unasked.
func (c *EtcdCluster) askMembersForQuorum(ctx context.Context, s *QuorumSampler, names []string, sample *QuorumSample) (silent []string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	memberListed := sample.Healthy > 0
	for _, name := range names {
		probe, err := s.probe(c, name)
		if err != nil {
			sample.Unasked++
			continue
		}
		wg.Go(func() {
			answer := askForQuorum(ctx, probe.cli)
			mu.Lock()
			defer mu.Unlock()
			if !answer.running {
				silent = append(silent, name)
				return
			}
			if !answer.learner {
				sample.Running++
			}
			if !answer.healthy {
				return
			}
			sample.Healthy++
			if answer.voters >= 0 && !memberListed {
				memberListed = true
				sample.Voters = answer.voters
			}
		})
	}
	wg.Wait()
	for _, name := range silent {
		s.closeProbe(name)
	}
	return silent
}

// quorumAnswer is what one member said in a sample.
type quorumAnswer struct {
	running, learner, healthy bool
	// voters in its member list; -1 when it gave none.
	voters int
}

// askForQuorum asks a member for its status (served from its own state, no
// leader needed), then a linearizable read (needs its leader and a
// quorum) and the member list.
func askForQuorum(ctx context.Context, cli *clientv3.Client) quorumAnswer {
	a := quorumAnswer{voters: -1}
	sctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := cli.Status(sctx, cli.Endpoints()[0])
	if err != nil {
		return a
	}
	a.running, a.learner = true, st.IsLearner
	rctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if _, err := cli.Get(rctx, "etcdproof/quorum-probe"); err != nil {
		return a
	}
	a.healthy = true
	if ml, err := cli.MemberList(rctx); err == nil {
		a.voters = 0
		for _, m := range ml.Members {
			if !m.IsLearner {
				a.voters++
			}
		}
	}
	return a
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

// closeProbe closes one member's probe.
func (s *QuorumSampler) closeProbe(name string) {
	if p, ok := s.probes[name]; ok {
		p.close()
		delete(s.probes, name)
	}
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
