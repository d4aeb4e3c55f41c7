package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// KillSpec kills the etcd process of the leader's pod, then of a
// follower's, with SIGKILL on their node, under traffic: a crash or an OOM
// kill, with no graceful stop (which every pod deletion gives). Each time
// the cluster must be back to N healthy members holding every acknowledged
// write within budget, whether the operator lets the member restart in
// place or replaces it; how it came back is in the report.
func KillSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if !e.Profile.Capabilities.Kill {
		notClaimed(s, "kill", "kill")
	}
	nodes, err := e.KindNodes()
	if err != nil {
		Incomplete(s, "kill", "cannot reach the nodes to kill a member's process: %v", err)
	}
	size, version := e.Config.Sizes.Kill, e.Profile.Etcd.Initial
	c := newCluster(ctx, s, "kill", size, version)
	want := framework.Want{Size: size, Version: version, Data: map[string]string{"etcdproof/marker/kill": "before-kill"}}
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals("kill", "members-ready")...)
	Expect(c.WriteMarker(ctx, "etcdproof/marker/kill", "before-kill")).To(Succeed())

	var recovery [2]time.Duration
	roles := [2]string{"leader", "follower"}
	res := withTraffic(ctx, s, c, "kill", "kill", framework.TrafficLimits{MaxWriteGap: e.Config.Budget("kill/longest-write-gap"), FaultInjected: true}, func() {
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
			how, err := c.WaitForContainerDeath(ctx, pod, container, e.Config.GetIntervals("kill", "container-dead")...)
			if err != nil {
				Incomplete(s, "kill", "the kill of %s pod %s was never seen (no restart, no new pod): %v", role, victim, err)
			}
			s.Report.Note("kill", "%s pod %s: %s", role, victim, how)
			_, truth = c.WaitForHealthy(ctx, want, e.Config.GetIntervals("kill", "members-ready")...)
			recovery[i] = time.Since(killed)
		}
	})
	for i, role := range roles {
		expectWithin(s, "kill", "recovery-"+role, recovery[i], "kill/recovery")
	}
	expectTraffic(res, "kill")
}
