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
)

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
func NodeLossSpec(ctx SpecContext, s *Suite) {
	const check = "node-loss"
	e := s.Env
	if !e.Profile.Capabilities.NodeLoss {
		notClaimed(s, check, "nodeLoss")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(s, check, "cannot reach the nodes to stop one: %v", err)
	}
	size, version := e.Config.Sizes.NodeLoss, e.Profile.Etcd.Initial
	workers, err := nodes.Workers()
	Expect(err).NotTo(HaveOccurred())
	if len(workers) < size {
		Incomplete(s, check, "the kind cluster has %d worker nodes (%s); the check needs %d, one member on each: run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)",
			len(workers), strings.Join(workers, ", "), size)
	}
	c := newCluster(ctx, s, check, size, version)
	whole := framework.Want{Size: size, Version: version}
	c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/node-loss": "before-node-loss"}
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	whole.Data = marker
	_, truth := c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	before, err := c.MemberNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	if problem := spreadProblem(before, workers); problem != "" {
		Incomplete(s, check, "%s: the check stops one member's node and needs the others elsewhere; run it on a cluster made with KIND_TOPOLOGY=3workers (make e2e-nodes)", problem)
	}

	var recovery time.Duration
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("node-loss/longest-write-gap"), FaultInjected: true}
	// The clients run beside the operator (on a worker), so that one node
	// holds both and a follower's node is free to stop wherever the leader is.
	operatorNodes, err := e.OperatorNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	clientsOn := ""
	if len(operatorNodes) == 1 && slices.Contains(workers, operatorNodes[0]) {
		clientsOn = operatorNodes[0]
	}
	res := withTrafficPod(ctx, s, c, check, check, limits, clientsOn, func(tp *framework.TrafficPod) {
		avoid := slices.Clone(operatorNodes)
		trafficNode, err := tp.NodeName(ctx)
		Expect(err).NotTo(HaveOccurred())
		avoid = append(avoid, trafficNode)
		victim, role, ok := nodeLossVictim(truth, before, avoid)
		if !ok {
			Incomplete(s, check, "every member's node also holds the operator or the traffic clients (%s): no node can be stopped without stopping them too",
				strings.Join(avoid, ", "))
		}
		node := before[victim]
		if role != "follower" {
			s.Report.Note(check, "both followers' nodes hold the operator or the traffic clients (%s): the leader's node is stopped (2 of 3 members still keep quorum)", strings.Join(avoid, ", "))
		}

		By(fmt.Sprintf("stopping node %s, which holds %s pod %s", node, role, victim))
		lost := time.Now()
		Expect(nodes.StopNode(ctx, node)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// Whatever happened, the cluster is whole again for the checks
			// that follow (a no-op when the node was started already).
			Expect(nodes.StartNode(ctx, node)).To(Succeed())
			e.WaitForNodeReady(ctx, node, e.Config.GetIntervals(check, "node-ready")...)
		}, NodeTimeout(e.Config.Timeout(check, "node-ready")+time.Minute))
		if err := e.WaitForNodeNotReady(ctx, node, e.Config.GetIntervals(check, "node-not-ready")...); err != nil {
			Incomplete(s, check, "the loss of node %s was never seen (the node stayed Ready): %v", node, err)
		}
		s.Report.Timing(check, "node-not-ready", time.Since(lost), 0)

		By(fmt.Sprintf("waiting for the member of pod %s to be replaced on another node", victim))
		want := whole
		want.LostNode = node
		_, after := c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
		recovery = time.Since(lost)
		now, err := c.MemberNodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		s.Report.Note(check, "%s", describeReplacement(victim, node, role, before, now, truth, after))
		for pod, on := range now {
			Expect(on).NotTo(Equal(node), "member pod %s is on the stopped node %s", pod, node)
		}

		By(fmt.Sprintf("starting node %s again", node))
		Expect(nodes.StartNode(ctx, node)).To(Succeed())
		e.WaitForNodeReady(ctx, node, e.Config.GetIntervals(check, "node-ready")...)
		c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	})
	expectWithin(s, check, "recovery", recovery, "node-loss/recovery")
	expectTraffic(res, check)
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
