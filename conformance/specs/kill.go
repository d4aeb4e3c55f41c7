package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// KillSpecInput is what KillSpec needs.
type KillSpecInput struct {
	// Env reaches the cluster and its nodes, and holds the profile and the
	// suite config.
	Env *framework.Env
	// Report records the check's notes, timings and traffic.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// KillSpec kills the etcd process of the leader's pod, then of a
// follower's, with SIGKILL on their node, under traffic: a crash or an OOM
// kill, with no graceful stop (which every pod deletion gives). Each time
// the cluster must be back to N healthy members holding every acknowledged
// write within budget, whether the operator lets the member restart in
// place or replaces it; how it came back is in the report.
func KillSpec(ctx SpecContext, inputGetter func() KillSpecInput) {
	const check = "kill"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling KillSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling KillSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling KillSpec")
	e, rep := input.Env, input.Report

	if !e.Profile.Capabilities.Kill {
		notClaimed(rep, check, "kill")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(rep, check, "cannot reach the nodes to kill a member's process: %v", err)
	}
	size, version := e.Config.Sizes.Kill, e.Profile.Etcd.Initial
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version})
	want := framework.Want{Size: size, Version: version, Data: map[string]string{"etcdproof/marker/kill": "before-kill"}}
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	Expect(c.WriteMarker(ctx, "etcdproof/marker/kill", "before-kill")).To(Succeed())

	var recovery [2]time.Duration
	roles := [2]string{"leader", "follower"}
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("kill/longest-write-gap"), FaultInjected: true}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: check, Limits: limits}, func() {
		for i, role := range roles {
			victim, err := truth.PodOfMember(truth.LeaderID)
			if role == "follower" {
				victim, err = truth.NonLeaderPod()
			}
			Expect(err).NotTo(HaveOccurred())
			pod, err := c.Pod(ctx, victim)
			Expect(err).NotTo(HaveOccurred())
			container := c.EtcdContainer(pod)
			By(fmt.Sprintf("killing the etcd process of %s pod %s (SIGKILL)", role, victim))
			killed := time.Now()
			Expect(nodes.KillContainer(ctx, pod, container)).To(Succeed())
			how, err := c.WaitForContainerDeath(ctx, pod, container, e.Config.GetIntervals(check, "container-dead")...)
			if err != nil {
				Incomplete(rep, check, "the kill of %s pod %s was never seen (no restart, no new pod): %v", role, victim, err)
			}
			rep.Note(check, "%s pod %s: %s", role, victim, how)
			_, truth = c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
			recovery[i] = time.Since(killed)
		}
	})
	for i, role := range roles {
		expectWithin(rep, check, "recovery-"+role, recovery[i], e.Config.Budget("kill/recovery"))
	}
	expectTraffic(res, check)
}
