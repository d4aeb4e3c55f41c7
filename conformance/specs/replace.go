package specs

import (
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// ReplaceSpec deletes a non-leader member pod, then the leader's, under
// traffic; each time membership must heal to N healthy members with the
// dead member removed. The time to heal is the MTTR.
func ReplaceSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if !e.Profile.Capabilities.DeadMemberReplacement {
		notClaimed(s, "replace", "deadMemberReplacement")
	}
	size, version := e.Config.Sizes.Replace, e.Profile.Etcd.Initial
	c := newCluster(ctx, s, "replace", size, version)
	want := framework.Want{Size: size, Version: version, Data: map[string]string{"etcdproof/marker/replace": "before-replace"}}
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals("replace", "members-ready")...)
	Expect(c.WriteMarker(ctx, "etcdproof/marker/replace", "before-replace")).To(Succeed())

	var mttr [2]time.Duration
	res := withTraffic(ctx, s, c, "replace", "replace", framework.TrafficLimits{MaxWriteGap: e.Config.Budget("replace/longest-write-gap"), FaultInjected: true}, func() {
		victim, err := truth.NonLeaderPod()
		Expect(err).NotTo(HaveOccurred())
		By("deleting non-leader pod " + victim)
		Expect(c.DeletePod(ctx, victim)).To(Succeed())
		mttr[0], truth = c.WaitForHealthy(ctx, want, e.Config.GetIntervals("replace", "members-ready")...)
		s.Report.Timing("replace", "mttr-non-leader", mttr[0], e.Config.Budget("replace/mttr"))

		leader, err := truth.PodOfMember(truth.LeaderID)
		Expect(err).NotTo(HaveOccurred())
		By("deleting leader pod " + leader)
		Expect(c.DeletePod(ctx, leader)).To(Succeed())
		mttr[1], _ = c.WaitForHealthy(ctx, want, e.Config.GetIntervals("replace", "members-ready")...)
		s.Report.Timing("replace", "mttr-leader", mttr[1], e.Config.Budget("replace/mttr"))
	})
	expectWithin(s, "replace", "mttr-non-leader", mttr[0], "replace/mttr")
	expectWithin(s, "replace", "mttr-leader", mttr[1], "replace/mttr")
	expectTraffic(res, "replace")
}
