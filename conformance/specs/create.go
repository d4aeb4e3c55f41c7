package specs

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// CreateSpec: N members ready within a budget, ground truth agrees with
// the operator's claims, and the client Service serves puts and gets.
func CreateSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	size, version := e.Config.Sizes.Create, e.Profile.Etcd.Initial
	By("creating a cluster of " + itoa(size) + " members at etcd " + version)
	c := newCluster(ctx, s, "create", size, version)
	if c.ExtraObjects > 0 {
		// A result that needed help must say so next to the result.
		s.Report.Note("create", "profile workaround: %d object(s) from cluster.extraObjects are created before every cluster; the operator did not create them itself (the profile says why)", c.ExtraObjects)
	}
	took, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals("create", "members-ready")...)
	expectWithin(s, "create", "time-to-ready", took, "create/time-to-ready")
	Expect(e.WriteJSON(truth, "create", "ground-truth.json")).To(Succeed())

	By("putting and getting through the client Service")
	res := withTraffic(ctx, s, c, "create", "client-service", framework.TrafficLimits{}, func() {})
	expectTraffic(res, "client-service")
}
