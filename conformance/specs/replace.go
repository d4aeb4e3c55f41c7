package specs

import (
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// ReplaceSpecInput is what ReplaceSpec needs.
type ReplaceSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// ReplaceSpec deletes a non-leader member pod, then the leader's, under
// traffic; each time membership must heal to N healthy members with the
// dead member removed. The time to heal is the MTTR.
func ReplaceSpec(ctx SpecContext, inputGetter func() ReplaceSpecInput) {
	const check = "replace"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling ReplaceSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling ReplaceSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling ReplaceSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.DeadMemberReplacement {
		notClaimed(rep, check, "deadMemberReplacement")
	}
	size, version := e.Config.Sizes.Replace, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	want := framework.Want{Size: size, Version: version, Data: map[string]string{"etcdproof/marker/replace": "before-replace"}}
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	Expect(c.WriteMarker(ctx, "etcdproof/marker/replace", "before-replace")).To(Succeed())

	var mttr [2]time.Duration
	budget := e.Config.Budget("replace/mttr")
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("replace/longest-write-gap"), FaultInjected: true}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		victim, err := truth.NonLeaderPod()
		Expect(err).NotTo(HaveOccurred())
		By("deleting non-leader pod " + victim)
		Expect(c.DeletePod(ctx, victim)).To(Succeed())
		mttr[0], truth = c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
		rep.Timing(check, "mttr-non-leader", mttr[0], budget)

		leader, err := truth.PodOfMember(truth.LeaderID)
		Expect(err).NotTo(HaveOccurred())
		By("deleting leader pod " + leader)
		Expect(c.DeletePod(ctx, leader)).To(Succeed())
		mttr[1], _ = c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
		rep.Timing(check, "mttr-leader", mttr[1], budget)
	})
	expectWithin(rep, check, "mttr-non-leader", mttr[0], budget)
	expectWithin(rep, check, "mttr-leader", mttr[1], budget)
	expectTraffic(res, check)
}
