package specs

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// QuorumLossSpecInput is what QuorumLossSpec needs.
type QuorumLossSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// QuorumLossSpec deletes a majority of the member pods of a healthy cluster
// at once with no grace period (a rack losing power, a bad forced drain):
// no write can commit until the operator brings members back.
//
// A profile that claims durable quorum loss gets a durable cluster (its
// template's .Durable) under traffic the whole time: the cluster must serve
// again within budget and keep every acknowledged write, the markers written
// before and the traffic's writes, judged by a history linearizable across
// the outage. A lossy claim promises only that the cluster serves again:
// the markers that survived are counted in the report, and a traffic phase
// after the recovery must be linearizable.
func QuorumLossSpec(ctx SpecContext, inputGetter func() QuorumLossSpecInput) {
	const check = "quorum-loss"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling QuorumLossSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling QuorumLossSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling QuorumLossSpec")
	e, rep := input.Env, input.Report

	claim := e.Profile.Capabilities.QuorumLoss
	if claim == "" {
		notClaimed(rep, check, "quorumLoss")
	}
	durable := claim == profile.QuorumLossDurable
	size, version := e.Config.Sizes.QuorumLoss, e.Profile.Etcd.Initial
	whole := framework.Want{Size: size, Version: version}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version, Durable: durable})
	_, truth := c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	// Written and acknowledged before the majority is lost: each is checked afterwards.
	kept := markers(check, "before-quorum-loss")
	Expect(c.WriteMarkers(ctx, kept)).To(Succeed())
	victims, err := truth.MajorityPods()
	Expect(err).NotTo(HaveOccurred())

	var recovery time.Duration
	loseMajority := func() {
		By(fmt.Sprintf("deleting %d of %d member pods at once with no grace period (the leader's first): %s",
			len(victims), size, strings.Join(victims, ", ")))
		lost := time.Now()
		if err := c.DeletePodsNow(ctx, victims, e.Config.GetIntervals(check, "pods-deleted")...); err != nil {
			Incomplete(rep, check, "the quorum loss was never seen: %v", err)
		}
		By("waiting for the cluster to serve again")
		c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
		recovery = time.Since(lost)
	}
	if !durable {
		loseMajority()
		expectWithin(rep, check, "recovery", recovery, e.Config.Budget("quorum-loss/recovery"))
		lost := lostMarkers(ctx, c, whole, kept, e.Config.GetIntervals(check, "members-ready")...)
		rep.Note(check, "lossy claim: %d of %d acknowledged marker writes survived the quorum loss (counted, not judged)",
			len(kept)-len(lost), len(kept))
		res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: "after-recovery"}, func() {})
		expectTraffic(res, "after-recovery")
		return
	}
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("quorum-loss/recovery"), FaultInjected: true}
	var outage outages
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits, Outages: &outage}, func() {
		outage.begin()
		loseMajority()
		outage.end()
		if lost := lostMarkers(ctx, c, whole, kept, e.Config.GetIntervals(check, "members-ready")...); len(lost) > 0 {
			Fail(fmt.Sprintf("acknowledged writes lost: %d of %d markers written before the quorum loss: %s",
				len(lost), len(kept), strings.Join(lost, "; ")))
		}
	})
	expectWithin(rep, check, "recovery", recovery, e.Config.Budget("quorum-loss/recovery"))
	expectTraffic(res, check)
}

// lostMarkers reads the markers back and lists the ones that are gone or
// changed. A marker no member answered for is read again until one does:
// unread is not lost, and not kept either.
func lostMarkers(ctx SpecContext, c *framework.EtcdCluster, whole framework.Want, markers map[string]string, intervals ...any) []string {
	want := whole
	want.Data = markers
	var truth framework.Truth
	Eventually(ctx, func(g Gomega) {
		var err error
		truth, err = c.GroundTruth(ctx, want)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(truth.Problems).NotTo(ContainElement(HavePrefix(framework.ProblemUnread)), "markers no member could be asked for")
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
	var lost []string
	for _, p := range truth.Problems {
		if strings.HasPrefix(p, framework.ProblemData) {
			lost = append(lost, p)
		}
	}
	return lost
}
