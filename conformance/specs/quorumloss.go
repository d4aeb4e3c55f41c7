package specs

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// quorumLossMarkers is how many keys are written, and acknowledged, before
// the majority is lost: each is checked afterwards.
const quorumLossMarkers = 10

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
func QuorumLossSpec(ctx SpecContext, s *Suite) {
	const check = "quorum-loss"
	e := s.Env
	claim := e.Profile.Capabilities.QuorumLoss
	if claim == "" {
		notClaimed(s, check, "quorumLoss")
	}
	durable := claim == profile.QuorumLossDurable
	size, version := e.Config.Sizes.QuorumLoss, e.Profile.Etcd.Initial
	whole := framework.Want{Size: size, Version: version}
	c := newClusterWith(ctx, s, check, size, version, clusterOptions{durable: durable})
	_, truth := c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
	markers := map[string]string{}
	for i := range quorumLossMarkers {
		markers[fmt.Sprintf("etcdproof/marker/quorum-loss/%02d", i)] = "before-quorum-loss"
	}
	Expect(c.WriteMarkers(ctx, markers)).To(Succeed())
	victims, err := truth.MajorityPods()
	Expect(err).NotTo(HaveOccurred())

	var recovery time.Duration
	loseMajority := func() {
		By(fmt.Sprintf("deleting %d of %d member pods at once with no grace period (the leader's first): %s",
			len(victims), size, strings.Join(victims, ", ")))
		lost := time.Now()
		if err := c.DeletePodsNow(ctx, victims, e.Config.GetIntervals(check, "pods-deleted")...); err != nil {
			Incomplete(s, check, "the quorum loss was never seen: %v", err)
		}
		By("waiting for the cluster to serve again")
		c.WaitForHealthy(ctx, whole, e.Config.GetIntervals(check, "members-ready")...)
		recovery = time.Since(lost)
	}
	if !durable {
		loseMajority()
		expectWithin(s, check, "recovery", recovery, "quorum-loss/recovery")
		lost := lostMarkers(ctx, c, whole, markers)
		s.Report.Note(check, "lossy claim: %d of %d acknowledged marker writes survived the quorum loss (counted, not judged)",
			len(markers)-len(lost), len(markers))
		res := withTraffic(ctx, s, c, check, "after-recovery", framework.TrafficLimits{}, func() {})
		expectTraffic(res, "after-recovery")
		return
	}
	res := withTraffic(ctx, s, c, check, check, framework.TrafficLimits{MaxWriteGap: e.Config.Budget("quorum-loss/recovery"), FaultInjected: true}, func() {
		loseMajority()
		if lost := lostMarkers(ctx, c, whole, markers); len(lost) > 0 {
			Fail(fmt.Sprintf("acknowledged writes lost: %d of %d markers written before the quorum loss: %s",
				len(lost), len(markers), strings.Join(lost, "; ")))
		}
	})
	expectWithin(s, check, "recovery", recovery, "quorum-loss/recovery")
	expectTraffic(res, check)
}

// lostMarkers reads the markers back through every member and lists the
// ones that are gone or changed.
func lostMarkers(ctx SpecContext, c *framework.EtcdCluster, whole framework.Want, markers map[string]string) []string {
	want := whole
	want.Data = markers
	truth, err := c.GroundTruth(ctx, want)
	Expect(err).NotTo(HaveOccurred())
	var lost []string
	for _, p := range truth.Problems {
		if strings.HasPrefix(p, framework.ProblemData) {
			lost = append(lost, p)
		}
	}
	return lost
}
