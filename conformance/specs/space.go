package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// SpaceSpecInput is what SpaceSpec needs.
type SpaceSpecInput struct {
	// Env reaches the cluster and holds the profile and the suite config.
	Env *framework.Env
	// Report records the check's notes and timings.
	Report *report.Recorder
	// Namespaces creates the namespace of the check's cluster.
	Namespaces NamespaceCreator
}

// spacePrefix is where the space check writes the data that fills the quota.
const spacePrefix = "etcdproof/space/"

// SpaceSpec fills a cluster made with a small backend quota (the profile's
// template, .QuotaBackendBytes) until etcd raises its NOSPACE alarm, where
// every workload that never compacts ends, then deletes a follower's pod.
// The operator must replace that member as any other (an alarm is no
// member's death) with every acknowledged write kept, and a quorum of
// voters must run at every sample (an operator that restarts every member
// over an alarm fails here). A profile that claims space: recovers must
// also bring writes back on its own once the application deleted its data:
// compact, defragment and disarm NOSPACE within space/recovery.
func SpaceSpec(ctx SpecContext, inputGetter func() SpaceSpecInput) {
	const check = "space"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling SpaceSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling SpaceSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling SpaceSpec")
	e, rep := input.Env, input.Report

	// Asked of every profile; the claim only adds "recovers".
	claim := e.Profile.Capabilities.Space
	size, version := e.Config.Sizes.Space, e.Profile.Etcd.Initial
	quota, valueBytes := e.Config.Space.QuotaBytes, e.Config.Space.ValueBytes
	if !profile.SetsQuota(e.Profile.Cluster.Template, profile.TemplateData{Name: "x", Namespace: "x", Size: size, Version: version}) {
		Incomplete(rep, check, "the profile's cluster template ignores .QuotaBackendBytes: with etcd's default 2 GiB quota on every member the check would write gigabytes; give the template a way to set the quota (for example ETCD_QUOTA_BACKEND_BYTES in the members' environment)")
	}
	c := newCluster(ctx, newClusterInput{Env: e, Report: rep, Namespaces: input.Namespaces, Check: check, Size: size, Version: version, QuotaBackendBytes: quota})
	_, truth := c.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals(check, "members-ready")...)
	kept := markers(check, "before-the-disk-fills")
	Expect(c.WriteMarkers(ctx, kept)).To(Succeed())
	want := framework.Want{Size: size, Version: version, Data: kept}

	quorum := &phaseQuorum{sampler: c.StartQuorumSampler(ctx, e.Config.Polling(check, "quorum-sample"), size)}
	DeferCleanup(quorum.stop) // on the failure path; a no-op once judged

	By(fmt.Sprintf("filling the %d MiB quota with %d KiB values until etcd raises NOSPACE", quota>>20, valueBytes>>10))
	most := int(4 * quota / int64(valueBytes))
	written, err := c.FillToQuota(ctx, spacePrefix, valueBytes, most)
	if err != nil {
		Incomplete(rep, check, "etcd never refused a write for lack of space: %v", err)
	}
	rep.Note(check, "NOSPACE after %d writes of %d KiB (quota %d MiB)", written, valueBytes>>10, quota>>20)

	victim, err := truth.NonLeaderPod()
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("deleting follower pod %s with no grace period while NOSPACE is raised", victim))
	lost := time.Now()
	if err := c.DeletePodsNow(ctx, []string{victim}, e.Config.GetIntervals(check, "pods-deleted")...); err != nil {
		Incomplete(rep, check, "the deletion of pod %s was never seen: %v", victim, err)
	}
	c.WaitForHealthy(ctx, want, e.Config.GetIntervals(check, "members-ready")...)
	replaced := time.Since(lost)
	alarms, err := c.NoSpaceAlarms(ctx)
	Expect(err).NotTo(HaveOccurred())
	rep.Note(check, "member replaced under NOSPACE; %d members' NOSPACE alarms still raised", alarms)

	var recovery time.Duration
	if claim == profile.SpaceRecovers {
		deleted, err := c.DeletePrefix(ctx, spacePrefix)
		Expect(err).NotTo(HaveOccurred(), "deleting the data that filled the quota (etcd takes deletions under NOSPACE)")
		By(fmt.Sprintf("deleted the %d keys that filled the quota: waiting for the operator to compact, defragment and disarm", deleted))
		freed := time.Now()
		Eventually(ctx, func() error {
			return c.Put(ctx, "etcdproof/space-check/after", "writes resumed")
		}).WithTimeout(e.Config.Timeout(check, "recovered")).WithPolling(e.Config.Polling(check, "recovered")).Should(Succeed(),
			"writes never resumed after the data that filled the quota was deleted: the operator did not compact, defragment and disarm NOSPACE")
		recovery = time.Since(freed)
	}
	judgeQuorum(rep, check, "the space check", quorum.stop(), nil, "")
	expectWithin(rep, check, "replace", replaced, e.Config.Budget("space/replace"))
	if claim == profile.SpaceRecovers {
		expectWithin(rep, check, "recovery", recovery, e.Config.Budget("space/recovery"))
	}
}
