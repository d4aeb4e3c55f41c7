package specs

import (
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// PartitionSpecInput is what PartitionSpec needs.
type PartitionSpecInput struct {
	// Env reaches the cluster and its nodes, and holds the profile and the
	// suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// PartitionSpec cuts the leader's pod off the network (every packet in or
// out dropped but its own node's: see cluster.Nodes.Partition) under
// traffic, holds the partition for partition/hold, then heals it. The two
// members left must elect a leader among themselves and serve (the write
// gap within one election), a quorum of voters must run at every sample,
// and the operator must not replace a member that is only cut off for
// less than its own deadlines (partition/hold is well inside the
// reference's 60 s and the node controller's 40 s): the partitioned
// member keeps its member ID and its pod. Once healed, the member must
// catch up, the cluster whole with every acknowledged write, within
// partition/catch-up.
func PartitionSpec(ctx SpecContext, inputGetter func() PartitionSpecInput) {
	const check = "partition"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling PartitionSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling PartitionSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling PartitionSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.Partition {
		notClaimed(rep, check, "partition")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(rep, check, "cannot reach the nodes to cut a member's pod off: %v", err)
	}
	size, version := e.Config.Sizes.Partition, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	marker := map[string]string{"etcdproof/marker/partition": "before-partition"}
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	Expect(c.WriteMarkers(ctx, marker)).To(Succeed())
	want := framework.Want{Size: size, Version: version, Data: marker}

	victimID := truth.LeaderID
	victim, err := truth.PodOfMember(victimID)
	Expect(err).NotTo(HaveOccurred())
	pod, err := c.Pod(ctx, victim)
	Expect(err).NotTo(HaveOccurred())
	victimUID := pod.UID
	hold := e.Config.Timeout(check, "hold")
	var catchUp time.Duration
	// Requests in flight on the cut-off member hang until their deadline,
	// whatever the operator does: listed, not judged. The member steps
	// down when cut off, and a release without pre-vote (3.4) may call one
	// more election when it comes back.
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("partition/longest-write-gap"), FaultInjected: true, MembersChanged: 2}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		By(fmt.Sprintf("cutting the leader's pod %s off the network for %s", victim, hold))
		cut := time.Now()
		p, err := nodes.Partition(ctx, pod, c.EtcdContainer(pod))
		if err != nil {
			Incomplete(rep, check, "could not cut pod %s off the network: %v", victim, err)
		}
		DeferCleanup(func(ctx SpecContext) { Expect(p.Heal(ctx)).To(Succeed()) })

		By("waiting for the members left to elect a leader among themselves")
		newLeader, err := waitForLeaderOtherThan(ctx, c, want, victimID, e.Config.GetIntervals(check, "new-leader")...)
		if err != nil {
			Incomplete(rep, check, "the partition was never seen: no other member became leader: %v", err)
		}
		rep.Note(check, "cut off %s (leader, member %x); the members left named member %x leader, seen %s after the cut (the write gap measures the election)", victim, victimID, newLeader, time.Since(cut).Round(time.Millisecond))

		By("holding the partition: the cut-off member must keep its place")
		Consistently(ctx, func(g Gomega) {
			expectMemberKept(g, ctx, c, want, victim, victimID, victimUID)
		}).WithTimeout(time.Until(cut.Add(hold))).WithPolling(e.Config.Polling(check, "hold")).Should(Succeed())

		By("healing the partition")
		Expect(p.Heal(ctx)).To(Succeed())
		healed := time.Now()
		c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
		catchUp = time.Since(healed)
	})
	Eventually(ctx, func(g Gomega) {
		expectMemberKept(g, ctx, c, want, victim, victimID, victimUID)
	}).WithTimeout(e.Config.Timeout(check, "new-leader")).WithPolling(e.Config.Polling(check, "new-leader")).Should(Succeed())
	expectWithin(rep, check, "catch-up", catchUp, e.Config.Budget("partition/catch-up"))
	expectTraffic(res, check)

	snapshotCatchUp(ctx, partitionPhase{env: e, report: rep, cluster: c, nodes: nodes, want: want})
}

// waitForLeaderOtherThan waits until every member that answers, but the
// one whose ID is gone, names a leader other than it.
func waitForLeaderOtherThan(ctx SpecContext, c *framework.EtcdCluster, want framework.Want, gone uint64, intervals ...any) (uint64, error) {
	var leader uint64
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(g Gomega) {
			truth, err := c.GroundTruth(ctx, want)
			g.Expect(err).NotTo(HaveOccurred())
			var leaders []uint64
			for _, p := range truth.Pods {
				if p.MemberID != gone && p.Error == "" && !slices.Contains(leaders, p.Leader) {
					leaders = append(leaders, p.Leader)
				}
			}
			g.Expect(leaders).To(HaveLen(1), "the leaders the other members name")
			g.Expect(leaders[0]).NotTo(BeElementOf(uint64(0), gone), "the other members' leader")
			leader = leaders[0]
		}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
	})
	return leader, err
}

// expectMemberKept: the cut-off member is still in the member list, and
// its pod the same one (not deleted and created again).
func expectMemberKept(g Gomega, ctx SpecContext, c *framework.EtcdCluster, want framework.Want, pod string, id uint64, uid any) {
	truth, err := c.GroundTruth(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(slices.ContainsFunc(truth.Members, func(m framework.Member) bool { return m.ID == id })).To(BeTrue(),
		"member %x (pod %s), only cut off from the network, was removed from the member list: the operator replaced a member that was not lost", id, pod)
	p, err := c.Pod(ctx, pod)
	g.Expect(err).NotTo(HaveOccurred(), "pod %s of member %x, only cut off from the network, is gone", pod, id)
	g.Expect(p.UID).To(BeEquivalentTo(uid), "pod %s of member %x, only cut off from the network, was deleted and made again", pod, id)
	g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s of member %x, only cut off from the network, is being deleted", pod, id)
}
