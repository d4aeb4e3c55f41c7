package specs

import (
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// ScaleSpec grows the cluster by a member and shrinks it back, under
// traffic; shrinking must remove the member from etcd's membership, not
// just delete its pod.
func ScaleSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	caps := e.Profile.Capabilities
	if !caps.ScaleUp {
		notClaimed(s, "scale", "scaleUp")
	}
	from, to, version := e.Config.Sizes.ScaleFrom, e.Config.Sizes.ScaleTo, e.Profile.Etcd.Initial
	c := newCluster(ctx, s, "scale", from, version)
	c.WaitForHealthy(ctx, framework.Want{Size: from, Version: version}, e.Config.GetIntervals("scale", "members-ready")...)
	marker := map[string]string{"etcdproof/marker/scale": "before-scale"}
	Expect(c.WriteMarker(ctx, "etcdproof/marker/scale", "before-scale")).To(Succeed())

	var up, down time.Duration
	res := withTraffic(ctx, s, c, "scale", "scale", framework.TrafficLimits{MaxWriteGap: e.Config.Budget("scale/longest-write-gap")}, func() {
		By("scaling " + itoa(from) + " → " + itoa(to))
		Expect(c.SetSize(ctx, to)).To(Succeed())
		up, _ = c.WaitForHealthy(ctx, framework.Want{Size: to, Version: version, Data: marker}, e.Config.GetIntervals("scale", "members-ready")...)
		s.Report.Timing("scale", "scale-up", up, e.Config.Budget("scale/time-to-scale"))
		if !caps.ScaleDown {
			s.Report.Note("scale", "scale-down skipped: profile does not claim scaleDown")
			return
		}
		By("scaling " + itoa(to) + " → " + itoa(from))
		Expect(c.SetSize(ctx, from)).To(Succeed())
		down, _ = c.WaitForHealthy(ctx, framework.Want{Size: from, Version: version, Data: marker}, e.Config.GetIntervals("scale", "members-ready")...)
		s.Report.Timing("scale", "scale-down", down, e.Config.Budget("scale/time-to-scale"))
	})
	expectWithin(s, "scale", "scale-up", up, "scale/time-to-scale")
	if caps.ScaleDown {
		expectWithin(s, "scale", "scale-down", down, "scale/time-to-scale")
	}
	expectTraffic(res, "scale")
}
