package specs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// NodeLossSpecInput is what NodeLossSpec needs.
type NodeLossSpecInput struct {
	// Env reaches the cluster and its kind nodes, and holds the profile and
	// the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// NodeLossSpec stops the kind node container that holds a member (a
// follower's, so the two members left keep quorum), under traffic, as a
// machine that loses power: the node's kubelet, runtime and pods stop
// together, and the API still shows the pods running until the node
// controller notices. The member must be replaced on another node within
// budget, with the data written before, while writes go on (the longest
// write gap within its budget: quorum holds throughout); the history must
// stay linearizable with no acknowledged write lost. The node is started
// again at the end, and the cluster must then be whole with it back.
//
// It needs a kind cluster with a worker node per member and the members on
// distinct workers (KIND_TOPOLOGY=3workers); otherwise it is INCOMPLETE.
func NodeLossSpec(ctx SpecContext, inputGetter func() NodeLossSpecInput) {
	const check = "node-loss"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling NodeLossSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling NodeLossSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling NodeLossSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.NodeLoss {
		notClaimed(rep, check, "nodeLoss")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(rep, check, "cannot reach the nodes to stop one: %v", err)
	}
	size, version := e.Config.Sizes.NodeLoss, e.Profile.Etcd.Initial
	workers, err := nodes.Workers()
	Expect(err).NotTo(HaveOccurred())
	if need := WorkersNeeded(check, e.Config.Sizes); len(workers) < need {
		Incomplete(rep, check, "the kind cluster has %d worker nodes (%s); the check needs %d, one member on each: run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)",
			len(workers), strings.Join(workers, ", "), need)
	}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	whole := framework.Want{Size: size, Version: version}
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/node-loss": "before-node-loss"}
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	whole.Data = marker
	_, truth := c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	before, err := c.MemberNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	if problem := spreadProblem(before, workers); problem != "" {
		Incomplete(rep, check, "%s: the check stops one member's node and needs the others elsewhere; run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)", problem)
	}

	// The clients run beside the operator (on a worker), so that one node
	// holds both and a follower's node is free to stop wherever the leader is.
	operatorNodes, err := e.OperatorNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	clientsOn := ""
	if len(operatorNodes) == 1 && slices.Contains(workers, operatorNodes[0]) {
		clientsOn = operatorNodes[0]
	}
	loss := nodeLoss{env: e, report: rep, nodes: nodes, cluster: c, whole: whole, truth: truth, before: before, operatorNodes: operatorNodes}
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("node-loss/longest-write-gap"), FaultInjected: true}
	res := withTrafficPod(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits, OnNode: clientsOn}, func(tp *framework.TrafficPod) {
		loss.run(ctx, tp)
	})
	expectWithin(rep, check, "recovery", loss.recovery, e.Config.Budget("node-loss/recovery"))
	expectTraffic(res, check)
}

// nodeLoss is the fault of the node-loss check, on a healthy cluster.
type nodeLoss struct {
	env    *framework.Env
	report *report.Recorder
	nodes  *framework.KindNodes
	// cluster, healthy as whole, with truth its ground truth and before
	// the node of each member pod.
	cluster *framework.EtcdCluster
	whole   framework.Want
	truth   framework.Truth
	before  map[string]string
	// operatorNodes hold the operator: they are not stopped.
	operatorNodes []string
	// recovery is the time from the stop of the node until the cluster
	// was whole on the other nodes.
	recovery time.Duration
}

// run stops a member's node, on none that holds the operator or tp's
// clients, waits for the member to be replaced on another node, then
// starts the node again.
func (l *nodeLoss) run(ctx SpecContext, tp *framework.TrafficPod) {
	const check = "node-loss"
	e, rep, c := l.env, l.report, l.cluster
	avoid := slices.Clone(l.operatorNodes)
	trafficNode, err := tp.NodeName(ctx)
	Expect(err).NotTo(HaveOccurred())
	avoid = append(avoid, trafficNode)
	victim, role, ok := nodeLossVictim(l.truth, l.before, avoid)
	if !ok {
		Incomplete(rep, check, "every member's node also holds the operator or the traffic clients (%s): no node can be stopped without stopping them too",
			strings.Join(avoid, ", "))
	}
	node := l.before[victim]
	if role != "follower" {
		rep.Note(check, "both followers' nodes hold the operator or the traffic clients (%s): the leader's node is stopped (2 of 3 members still keep quorum)", strings.Join(avoid, ", "))
	}

	By(fmt.Sprintf("stopping node %s, which holds %s pod %s", node, role, victim))
	lost := time.Now()
	Expect(l.nodes.StopNode(ctx, node)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		// Whatever happened, the cluster is whole again for the checks
		// that follow (a no-op when the node was started already).
		Expect(l.nodes.StartNode(ctx, node)).To(Succeed())
		e.WaitForNodeReady(ctx, node, e.Config.GetIntervals(check, "node-ready")...)
	}, NodeTimeout(e.Config.Timeout(check, "node-ready")+time.Minute))
	if err := e.WaitForNodeNotReady(ctx, node, e.Config.GetIntervals(check, "node-not-ready")...); err != nil {
		Incomplete(rep, check, "the loss of node %s was never seen (the node stayed Ready): %v", node, err)
	}
	rep.Timing(check, "node-not-ready", time.Since(lost), 0)

	By(fmt.Sprintf("waiting for the member of pod %s to be replaced on another node", victim))
	want := l.whole
	want.LostNode = node
	_, after := c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
	l.recovery = time.Since(lost)
	now, err := c.MemberNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	rep.Note(check, "%s", describeReplacement(victim, node, role, l.before, now, l.truth, after))
	for pod, on := range now {
		Expect(on).NotTo(Equal(node), "member pod %s is on the stopped node %s", pod, node)
	}

	By(fmt.Sprintf("starting node %s again", node))
	Expect(l.nodes.StartNode(ctx, node)).To(Succeed())
	e.WaitForNodeReady(ctx, node, e.Config.GetIntervals(check, "node-ready")...)
	c.WaitForHealthy(ctx, l.whole, e.Config.GetIntervals(check, "members-ready")...)
}

// spreadProblem says why member pods (pod → node) are not each on a worker
// of their own; "" when they are.
func spreadProblem(placed map[string]string, workers []string) string {
	byNode := map[string][]string{}
	for _, pod := range slices.Sorted(maps.Keys(placed)) {
		byNode[placed[pod]] = append(byNode[placed[pod]], pod)
	}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		pods := byNode[node]
		switch {
		case !slices.Contains(workers, node):
			return fmt.Sprintf("member pods %s run on %q, not a worker node (%s)", strings.Join(pods, ", "), node, strings.Join(workers, ", "))
		case len(pods) > 1:
			return fmt.Sprintf("member pods %s share node %s", strings.Join(pods, ", "), node)
		}
	}
	return ""
}

// nodeLossVictim picks the member pod whose node is stopped: a follower's
// (sorted by name), else the leader's, on a node that holds nothing in
// avoid (the operator and the traffic clients, whose loss is not the fault
// judged here).
func nodeLossVictim(t framework.Truth, placed map[string]string, avoid []string) (pod, role string, ok bool) {
	leader, _ := t.PodOfMember(t.LeaderID)
	var followers []string
	for _, p := range t.Pods {
		if p.Error == "" && p.Pod != leader {
			followers = append(followers, p.Pod)
		}
	}
	slices.Sort(followers)
	for _, candidate := range append(followers, leader) {
		node, placedOK := placed[candidate]
		if candidate == "" || !placedOK || node == "" || slices.Contains(avoid, node) {
			continue
		}
		if candidate == leader {
			return candidate, "leader", true
		}
		return candidate, "follower", true
	}
	return "", "", false
}

// describeReplacement says how the lost member came back, for the report.
func describeReplacement(victim, node, role string, before, now map[string]string, was, is framework.Truth) string {
	var added []string
	for _, pod := range slices.Sorted(maps.Keys(now)) {
		if _, ok := before[pod]; !ok {
			added = append(added, fmt.Sprintf("%s on %s", pod, now[pod]))
		}
	}
	var lostID uint64
	for _, p := range was.Pods {
		if p.Pod == victim {
			lostID = p.MemberID
		}
	}
	member := "its member left the member list"
	if slices.ContainsFunc(is.Members, func(m framework.Member) bool { return m.ID == lostID }) {
		member = "its member is still in the member list"
	}
	how := "no new member pod"
	if len(added) > 0 {
		how = "new member pods " + strings.Join(added, ", ")
	}
	msg := fmt.Sprintf("node %s stopped with %s pod %s: %s (%x); %s", node, role, victim, member, lostID, how)
	if len(is.OnLostNode) > 0 {
		msg += fmt.Sprintf("; %s stayed terminating on the stopped node (only its kubelet can confirm the deletion)", strings.Join(is.OnLostNode, ", "))
	}
	return msg
}
