package specs

import (
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// ScaleSpecInput is what ScaleSpec needs.
type ScaleSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// ScaleSpec grows the cluster by a member and shrinks it back, under
// traffic; shrinking must remove the member from etcd's membership, not
// just delete its pod.
func ScaleSpec(ctx SpecContext, inputGetter func() ScaleSpecInput) {
	const check = "scale"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling ScaleSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling ScaleSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling ScaleSpec")
	e, rep := input.Env, input.Report

	caps := e.Profile.Capabilities
	if !caps.ScaleUp {
		notClaimed(rep, check, "scaleUp")
	}
	from, to, version := e.Config.Sizes.ScaleFrom, e.Config.Sizes.ScaleTo, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: from, Version: version})
	c.WaitForHealthy(ctx, framework.Want{Size: from, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	marker := map[string]string{"etcdproof/marker/scale": "before-scale"}
	Expect(c.WriteMarker(ctx, "etcdproof/marker/scale", "before-scale")).To(Succeed())

	var up, down time.Duration
	budget := e.Config.Budget("scale/time-to-scale")
	// The scale-down removes members, the leader perhaps among them.
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("scale/longest-write-gap"), MembersChanged: max(to-from, 0)}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		By("scaling " + itoa(from) + " → " + itoa(to))
		Expect(c.SetSize(ctx, to)).To(Succeed())
		up, _ = c.WaitForHealthy(ctx, framework.Want{Size: to, Version: version, Data: marker}, e.Config.GetIntervals(check, "members-ready")...)
		rep.Timing(check, "scale-up", up, budget)
		if !caps.ScaleDown {
			// Skipped is not passed: the check promises 3→4 and 4→3.
			unobserved(rep, check, "scale-down %d → %d did not run: the profile does not claim scaleDown", to, from)
			return
		}
		By("scaling " + itoa(to) + " → " + itoa(from))
		Expect(c.SetSize(ctx, from)).To(Succeed())
		down, _ = c.WaitForHealthy(ctx, framework.Want{Size: from, Version: version, Data: marker}, e.Config.GetIntervals(check, "members-ready")...)
		rep.Timing(check, "scale-down", down, budget)
	})
	expectWithin(rep, check, "scale-up", up, budget)
	if caps.ScaleDown {
		expectWithin(rep, check, "scale-down", down, budget)
	}
	expectTraffic(res, check)
}
