package specs

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// UpgradeSpec walks the profile's upgrade path one minor at a time while
// clients put and get; the history must be linearizable with no
// acknowledged write lost, no client-visible error and no long write gap.
func UpgradeSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if !e.Profile.Capabilities.Upgrade {
		notClaimed(s, "upgrade", "upgrade")
	}
	versions := e.Profile.UpgradeVersions()
	s.Report.Note("upgrade", "path %s", strings.Join(versions, " → "))
	size := e.Config.Sizes.Upgrade
	c := newCluster(ctx, s, "upgrade", size, versions[0])
	c.WaitForHealthy(ctx, framework.Want{Size: size, Version: versions[0]}, e.Config.GetIntervals("upgrade", "members-ready")...)
	Expect(c.WriteMarker(ctx, "etcdproof/marker/upgrade", "before-upgrade")).To(Succeed())
	data := map[string]string{"etcdproof/marker/upgrade": "before-upgrade"}

	var total time.Duration
	res := withTraffic(ctx, s, c, "upgrade", "upgrade", framework.TrafficLimits{MaxWriteGap: e.Config.Budget("upgrade/longest-write-gap")}, func() {
		for _, v := range versions[1:] {
			By("upgrading to etcd " + v)
			Expect(c.SetVersion(ctx, v)).To(Succeed())
			took, _ := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: v, Data: data}, e.Config.GetIntervals("upgrade", "members-ready")...)
			s.Report.Timing("upgrade", "to-"+v, took, 0)
			total += took
		}
	})
	expectWithin(s, "upgrade", "duration", total, "upgrade/duration")
	expectTraffic(res, "upgrade")
}
