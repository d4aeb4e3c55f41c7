package specs

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// UpgradeSpecInput is what UpgradeSpec needs.
type UpgradeSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// UpgradeSpec walks the profile's upgrade path one minor at a time while
// clients put and get; each hop's history must be linearizable with no
// acknowledged write lost, no client-visible error after one retry but
// those etcd itself causes (a leader change, or a stopping 3.4 member: see
// traffic.undrainedReleases), no more leader changes than members
// restarted, a quorum running at every sample, and no long write gap.
func UpgradeSpec(ctx SpecContext, inputGetter func() UpgradeSpecInput) {
	const check = "upgrade"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling UpgradeSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling UpgradeSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling UpgradeSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.Upgrade {
		notClaimed(rep, check, "upgrade")
	}
	versions := e.Profile.UpgradeVersions()
	rep.Note(check, "path %s", strings.Join(versions, " → "))
	size := e.Config.Sizes.Upgrade
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: versions[0]})
	c.WaitForHealthy(ctx, framework.Want{Size: size, Version: versions[0]}, e.Config.GetIntervals(check, "members-ready")...)
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
		// Every member is restarted or replaced once.
		limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("upgrade/longest-write-gap"), MembersChanged: size}
		if e.Config.Traffic.Undrained(from) {
			limits.Undrained = true
			rep.Note(check, "hop %s → %s: etcd %s fails the requests in flight on a member that stops, whatever the operator does; a closed-connection failure of a request in flight when a member pod was stopped is excused (one per client and stop), every other failure is judged", from, v, from)
		}
		phase := "to-" + v
		res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: phase, Limits: limits}, func() {
			By("upgrading to etcd " + v)
			Expect(c.SetVersion(ctx, v)).To(Succeed())
			took, _ := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: v, Data: data}, e.Config.GetIntervals(check, "members-ready")...)
			rep.Timing(check, phase, took, 0)
			total += took
		})
		results = append(results, hopTraffic{res, phase})
	}
	expectWithin(rep, check, "duration", total, e.Config.Budget("upgrade/duration"))
	for _, r := range results {
		expectTraffic(r.res, r.phase)
	}
}
