package specs

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// DrainDuringRolloutSpecInput is what DrainDuringRolloutSpec needs.
type DrainDuringRolloutSpecInput struct {
	// Env reaches the cluster and its kind nodes, and holds the profile and
	// the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// DrainDuringRolloutSpec drains every worker node, one right after another,
// while the operator changes the cluster's membership: first while it
// scales a cluster of N+2 members down to N, then while it upgrades it one
// minor release. Node maintenance and rollouts overlap in real clusters, and
// that is where a disruption budget counted from spec.size rather than from
// the voters etcd has lets a drain take a quorum: during 5→3 it allowed
// three evictions at once, during a roll at size 3 two of four voters. As
// in the drain check, every member is asked for a linearizable read every
// second and no sample may see fewer healthy voters than a quorum; writes
// go on, the history stays linearizable with no acknowledged write lost,
// each drain ends within its budget and the cluster is whole afterwards.
//
// It needs a kind cluster with a worker node per member of the smaller
// cluster (KIND_TOPOLOGY=3workers); otherwise it is INCOMPLETE. Members
// share nodes here (N+2 members on N workers): that is the point.
func DrainDuringRolloutSpec(ctx SpecContext, inputGetter func() DrainDuringRolloutSpecInput) {
	const check = "drain-during-rollout"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling DrainDuringRolloutSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling DrainDuringRolloutSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling DrainDuringRolloutSpec")
	e, rep := input.Env, input.Report

	caps := e.Profile.Capabilities
	if !caps.Drain {
		notClaimed(rep, check, "drain")
	}
	if !caps.ScaleDown || !caps.Upgrade || e.Profile.Etcd.UpgradeTo == "" {
		Incomplete(rep, check, "the check drains nodes during a scale-down and an upgrade, and the profile does not claim scaleDown and upgrade (with etcd.upgradeTo)")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(rep, check, "cannot list the nodes to drain: %v", err)
	}
	size, version, to := e.Config.Sizes.Drain, e.Profile.Etcd.Initial, e.Profile.Etcd.UpgradeTo
	workers, err := nodes.Workers()
	Expect(err).NotTo(HaveOccurred())
	if need := WorkersNeeded(check, e.Config.Sizes); len(workers) < need {
		Incomplete(rep, check, "the kind cluster has %d worker nodes; the check needs %d: run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)", len(workers), need)
	}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size + 2, Version: version})
	marker := map[string]string{"etcdproof/marker/drain-during-rollout": "before-drains"}
	c.WaitForHealthy(ctx, framework.Want{Size: size + 2, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	budgets, err := c.DisruptionBudgets(ctx)
	Expect(err).NotTo(HaveOccurred())

	scaling := drains{check: check, env: e, report: rep, cluster: c, whole: framework.Want{Size: size, Version: version, Data: marker}, voters: size + 2}
	upgrading := drains{check: check, env: e, report: rep, cluster: c, whole: framework.Want{Size: size, Version: to, Data: marker}, voters: size}
	// The scale-down removes 2 members, the upgrade replaces size, and each
	// round of drains evicts each member pod at most once (size+2 during
	// the scale-down, size+1 during an upgrade that adds one first).
	changed := 2 + size + (size + 2) + (size + 1)
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("drain/longest-write-gap"), MembersChanged: changed}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits, quorumSampledByCheck: true}, func() {
		By(fmt.Sprintf("scaling %d → %d and draining every worker meanwhile, the one with the most members first", size+2, size))
		order := mostMembersFirst(ctx, c, workers)
		Expect(c.SetSize(ctx, size)).To(Succeed())
		scaling.run(ctx, order)
		if scaling.failure != "" || scaling.notWhole != nil {
			return // judged below; the upgrade needs a whole cluster
		}
		By(fmt.Sprintf("upgrading %s → %s and draining every worker meanwhile, the one with the most members first", version, to))
		order = mostMembersFirst(ctx, c, workers)
		Expect(c.SetVersion(ctx, to)).To(Succeed())
		upgrading.run(ctx, order)
	})
	// As in the drain check, the quorum samples first: they name the cause.
	rep.Note(check, "during the scale-down:")
	scaling.judge(budgets)
	rep.Note(check, "during the upgrade:")
	upgrading.judge(budgets)
	expectTraffic(res, check)
}

// mostMembersFirst orders workers by how many member pods each holds, most
// first (then by name): the first drain then asks for the most evictions at
// once, while the operator has just begun to change the membership. That is
// the moment a budget counted from spec.size allows too many; in node order
// the first drain may find one member only, and a broken budget pass.
func mostMembersFirst(ctx SpecContext, c *framework.EtcdCluster, workers []string) []string {
	placed, err := c.MemberNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	count := map[string]int{}
	for _, node := range placed {
		count[node]++
	}
	order := slices.Clone(workers)
	slices.SortStableFunc(order, func(a, b string) int {
		if d := count[b] - count[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return order
}
