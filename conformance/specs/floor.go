package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// FloorCheck names the floor's measurements in the report. It is not a
// check: nothing is judged, and it runs only when asked (etcdproof run
// --floor, which etcdproof bench sets for its baseline).
const FloorCheck = "floor"

// FloorSpecInput is what FloorSpec needs.
type FloorSpecInput struct {
	Env        *framework.Env
	Report     *report.Recorder
	Namespaces NamespaceCreator
}

// FloorSpec measures what the create, scale and replace checks would take
// with no operator: the reference's member pods (its own code builds
// them), created, grown, shrunk and replaced by the suite at once, timed
// like the checks (same sizes, same waits, the same traffic during scale
// and replace). Its timings carry the checks' names, so the benchmark
// reads every operator's figure as a multiple of its floor.
func FloorSpec(ctx SpecContext, inputGetter func() FloorSpecInput) {
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling FloorSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling FloorSpec")
	Expect(input.Namespaces).NotTo(BeNil(), "Invalid argument. input.Namespaces can't be nil when calling FloorSpec")
	e, rep := input.Env, input.Report
	version := e.Profile.Etcd.Initial
	ns, err := input.Namespaces.CreateNamespace(ctx, "etcdproof-floor")
	Expect(err).NotTo(HaveOccurred())
	var f *framework.FloorCluster
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			e.DumpNamespace(ctx, ns, FloorCheck)
		}
		if e.Opts.SkipCleanup {
			return
		}
		if f != nil {
			if err := f.DiscardMemberPods(ctx); err != nil {
				GinkgoWriter.Printf("discarding the floor's member pods: %v\n", err)
			}
		}
		e.DeleteNamespace(ctx, ns, e.Config.GetIntervals(FloorCheck, "namespace-deleted")...)
	})
	f, err = e.NewFloorCluster(ctx, ns, fmt.Sprintf("floor-%d", time.Now().Unix()%100000), version)
	Expect(err).NotTo(HaveOccurred())

	size := e.Config.Sizes.Create
	By(fmt.Sprintf("creating %d member pods with no operator", size))
	start := time.Now()
	Expect(f.Create(ctx, size)).To(Succeed())
	f.WaitForHealthy(ctx, framework.Want{Size: size, Version: version}, e.Config.GetIntervals("create", "members-ready")...)
	rep.Timing(FloorCheck, "time-to-ready", time.Since(start), 0)

	from, to := e.Config.Sizes.ScaleFrom, e.Config.Sizes.ScaleTo
	Expect(from).To(Equal(size), "the floor scales the cluster it created: sizes.scaleFrom must equal sizes.create")
	withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: f.EtcdCluster, Check: FloorCheck, Phase: "scale", quorumSampledByCheck: true}, func() {
		By(fmt.Sprintf("adding %d voting member(s) by hand", to-from))
		start := time.Now()
		var added []string
		for range to - from {
			name, err := f.AddMember(ctx)
			Expect(err).NotTo(HaveOccurred())
			added = append(added, name)
		}
		f.WaitForHealthy(ctx, framework.Want{Size: to, Version: version}, e.Config.GetIntervals("scale", "members-ready")...)
		rep.Timing(FloorCheck, "scale-up", time.Since(start), 0)

		By("removing them by hand")
		start = time.Now()
		for _, name := range added {
			Expect(f.RemoveMember(ctx, name)).To(Succeed())
		}
		f.WaitForHealthy(ctx, framework.Want{Size: from, Version: version}, e.Config.GetIntervals("scale", "members-ready")...)
		rep.Timing(FloorCheck, "scale-down", time.Since(start), 0)
	})

	truth, err := f.GroundTruth(ctx, framework.Want{Size: from, Version: version})
	Expect(err).NotTo(HaveOccurred())
	victim, err := truth.NonLeaderPod()
	Expect(err).NotTo(HaveOccurred())
	withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: f.EtcdCluster, Check: FloorCheck, Phase: "replace", quorumSampledByCheck: true}, func() {
		By("deleting non-leader pod " + victim + " and replacing its member by hand")
		start := time.Now()
		Expect(f.DeletePod(ctx, victim)).To(Succeed())
		Expect(f.RemoveMember(ctx, victim)).To(Succeed())
		_, err := f.AddMember(ctx)
		Expect(err).NotTo(HaveOccurred())
		f.WaitForHealthy(ctx, framework.Want{Size: from, Version: version}, e.Config.GetIntervals("replace", "members-ready")...)
		rep.Timing(FloorCheck, "mttr-non-leader", time.Since(start), 0)
	})
}
