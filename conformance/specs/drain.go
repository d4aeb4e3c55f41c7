package specs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// DrainSpecInput is what DrainSpec needs.
type DrainSpecInput struct {
	// Env reaches the cluster and its kind nodes, and holds the profile and
	// the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// DrainSpec drains every worker node that holds a member, one right after
// another, as a platform team rolls node maintenance through a cluster
// (kubectl drain --ignore-daemonsets --delete-emptydir-data, then
// uncordon): the next drain starts as soon as the last one evicted its
// pods, while the operator may still be replacing that member, so only a
// PodDisruptionBudget can make it wait. Throughout, every member is asked
// for a linearizable read every second, and no sample may see fewer
// healthy voters than a quorum; writes go on (the longest write gap within
// budget) and the history stays linearizable with no acknowledged write
// lost. Each drain must end within its budget, and a budget must cover the
// member pods: without one, quorum held only by the timing of this run.
//
// It needs a kind cluster with a worker node per member and the members on
// distinct workers (KIND_TOPOLOGY=3workers); otherwise it is INCOMPLETE.
func DrainSpec(ctx SpecContext, inputGetter func() DrainSpecInput) {
	const check = "drain"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling DrainSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling DrainSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling DrainSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.Drain {
		notClaimed(rep, check, "drain")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(rep, check, "cannot list the nodes to drain: %v", err)
	}
	size, version := e.Config.Sizes.Drain, e.Profile.Etcd.Initial
	workers, err := nodes.Workers()
	Expect(err).NotTo(HaveOccurred())
	if need := WorkersNeeded(check, e.Config.Sizes); len(workers) < need {
		Incomplete(rep, check, "the kind cluster has %d worker nodes (%s); the check needs %d, one member on each: run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)",
			len(workers), strings.Join(workers, ", "), need)
	}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	whole := framework.Want{Size: size, Version: version}
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/drain": "before-drain"}
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	whole.Data = marker
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	placed, err := c.MemberNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	if problem := spreadProblem(placed, workers); problem != "" {
		Incomplete(rep, check, "%s: the check drains each member's node in turn and needs them apart; run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)", problem)
	}
	budgets, err := c.DisruptionBudgets(ctx)
	Expect(err).NotTo(HaveOccurred())

	d := drains{check: check, env: e, report: rep, cluster: c, whole: whole, voters: size}
	// Each member is evicted and replaced once.
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("drain/longest-write-gap"), MembersChanged: size}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits, quorumSampledByCheck: true}, func() {
		d.run(ctx, uniqueNodes(placed))
	})
	// The quorum samples first: a drain that could not finish, a failed
	// request or a cluster that is not whole afterwards follow from a lost
	// quorum, and the report must name the cause.
	d.judge(budgets)
	expectTraffic(res, check)
}

// drains drains nodes one after another under a quorum sampler.
type drains struct {
	// check is the check the drains belong to: its notes and verdict.
	check   string
	env     *framework.Env
	report  *report.Recorder
	cluster *framework.EtcdCluster
	// whole is the cluster the drains must leave behind; voters is how
	// many vote when they start.
	whole   framework.Want
	voters  int
	results []framework.DrainResult
	samples framework.QuorumSamples
	failure string
	// notWhole says why the cluster was not whole again after the drains.
	notWhole error
}

// run drains each node, then uncordons it, with no wait in between: the
// operator's PodDisruptionBudget, not the suite, must hold the next
// eviction until the last evicted member is replaced. The sampler (and the
// caller's traffic) go on until the cluster is whole again: the last drain
// returns once its pods are gone, and a quorum its eviction broke is lost
// only after that (the drain check once passed its samples while the
// cluster it left had lost its quorum for good).
func (d *drains) run(ctx SpecContext, nodes []string) {
	// Each drain is waited for and timed as in the drain check.
	const check = "drain"
	e := d.env
	sampler := d.cluster.StartQuorumSampler(ctx, e.Config.Polling(check, "quorum-sample"), d.voters)
	defer func() { d.samples = sampler.Stop() }()
	for _, node := range nodes {
		DeferCleanup(func(ctx SpecContext) {
			// Whatever happened, the node takes pods again for the checks
			// that follow (a no-op once it was uncordoned).
			Expect(e.UncordonNode(ctx, node)).To(Succeed())
		})
		By(fmt.Sprintf("draining node %s", node))
		res, err := e.DrainNode(ctx, node, e.Config.Timeout(check, "node-drained"))
		d.results = append(d.results, res)
		if err != nil {
			d.failure = err.Error()
			return
		}
		Expect(e.UncordonNode(ctx, node)).To(Succeed())
	}
	By("waiting for the cluster to be whole after the drains")
	d.notWhole = InterceptGomegaFailure(func() {
		d.cluster.WaitForHealthy(ctx, d.whole, e.Config.GetIntervals(check, "members-ready")...)
	})
}

// judge records what the drains did and fails the check on the first
// broken promise: a drain that did not finish or took too long, a sample
// below quorum, or quorum kept with nothing to keep it.
func (d *drains) judge(budgets []string) {
	check := d.check
	rep := d.report
	refusals := 0
	for _, r := range d.results {
		refusals += r.BudgetRefusals
		rep.Note(check, "drained %s in %s: evicted %s; %d evictions refused by a disruption budget", r.Node, r.Took.Round(time.Millisecond), strings.Join(r.Evicted, ", "), r.BudgetRefusals)
		rep.Timing(check, "node/"+r.Node, r.Took, d.env.Config.Budget("drain/node"))
	}
	covering := "PodDisruptionBudgets covering the members: " + orNone(budgets)
	judgeQuorum(rep, check, "the drains", d.samples, nil, fmt.Sprintf(" (%s; %d evictions refused)", covering, refusals))
	if d.samples.Sampled() < 2*len(d.results) {
		// The drains, the cluster and the budget are still judged below.
		unobserved(rep, check, "the quorum sampler took %d samples over %d drains (fewer than 2 a drain): the check could not observe the quorum it judges", d.samples.Sampled(), len(d.results))
	}
	Expect(d.failure).To(BeEmpty(), "%s", d.failure)
	Expect(d.notWhole).NotTo(HaveOccurred(), "the cluster was not whole again after the drains")
	for _, r := range d.results {
		Expect(r.Took).To(BeNumerically("<=", d.env.Config.Budget("drain/node")), "draining %s took %s, budget %s", r.Node, r.Took.Round(time.Millisecond), d.env.Config.Budget("drain/node"))
	}
	Expect(budgets).NotTo(BeEmpty(), "no PodDisruptionBudget covers the member pods (%d evictions refused): nothing stops a drain from evicting a quorum, this run kept one by timing alone", refusals)
}

// uniqueNodes are the nodes of pod → node, sorted.
func uniqueNodes(placed map[string]string) []string {
	var out []string
	for _, n := range placed {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
