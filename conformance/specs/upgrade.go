package specs

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// UpgradeSpec walks the profile's upgrade path one minor at a time while
// clients put and get; each hop's history must be linearizable with no
// acknowledged write lost, no client-visible error (see
// traffic.undrainedReleases) and no long write gap.
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

	// One traffic phase per hop, so the report shows each hop's history and
	// each is judged by what its members do when they stop.
	var total time.Duration
	type hopTraffic struct {
		res   phaseTraffic
		phase string
	}
	var results []hopTraffic
	for i, v := range versions[1:] {
		from := versions[i]
		limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("upgrade/longest-write-gap")}
		if e.Config.Traffic.Undrained(from) {
			limits.FaultInjected = true
			s.Report.Note("upgrade", "hop %s → %s: etcd %s fails the requests in flight on a member that stops, whatever the operator does; client errors are listed, not judged (linearizability, lost writes and the write gap still are)", from, v, from)
		}
		phase := "to-" + v
		res := withTraffic(ctx, s, c, "upgrade", phase, limits, func() {
			By("upgrading to etcd " + v)
			Expect(c.SetVersion(ctx, v)).To(Succeed())
			took, _ := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: v, Data: data}, e.Config.GetIntervals("upgrade", "members-ready")...)
			s.Report.Timing("upgrade", phase, took, 0)
			total += took
		})
		results = append(results, hopTraffic{res, phase})
	}
	expectWithin(s, "upgrade", "duration", total, "upgrade/duration")
	for _, r := range results {
		expectTraffic(r.res, r.phase)
	}
}
