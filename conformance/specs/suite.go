// Package specs holds the conformance checks. Each check is a function
// XSpec(ctx, XSpecInput); Register wires them, in order, into one Ordered
// Ginkgo container with a label per check. Nothing here knows which
// operator it tests: everything operator-specific comes from the profile.
package specs

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best dot-imported.
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// Suite is the state shared by the checks of one run.
type Suite struct {
	Env    *framework.Env
	Report *report.Recorder
	// Started bounds the audit log the rbac check reads.
	Started time.Time
	// Before is the inventory taken before the operator was installed.
	Before inventory.Snapshot
	// Namespaces are those the run created for its clusters.
	Namespaces []string
	// Uninstalled is set once the cleanup check removed the operator.
	Uninstalled bool
	// SetupFailed is set when install failed: the run could not be done.
	SetupFailed bool
	// GinkgoReport is filled at the end of the suite.
	GinkgoReport Report
	// memory samples the operator from install until uninstall; Memory
	// holds the result once it stopped.
	memory *framework.MemorySampler
	Memory *framework.MemoryUsage
}

// StopMemorySampler ends the operator's memory sampling, keeping the result.
func (s *Suite) StopMemorySampler() {
	if s.memory == nil {
		return
	}
	u := s.memory.Stop()
	s.memory, s.Memory = nil, &u
}

// Register declares the suite, with the timeouts of cfg; get is called
// when the specs run.
func Register(cfg *profile.Config, get func() *Suite) {
	Describe("etcd operator conformance", Ordered, ContinueOnFailure, func() {
		BeforeAll(func(ctx SpecContext) {
			s := get()
			s.Started = time.Now()
			// Until the operator is up, a failure means the run could not be done.
			s.SetupFailed = true
			e := s.Env
			By("taking the inventory before install")
			snap, err := inventory.Take(ctx, e.Disc, e.Dynamic)
			Expect(err).NotTo(HaveOccurred())
			s.Before = snap
			By("installing operator profile " + e.Profile.Name)
			Expect(e.RunSteps(ctx, e.Profile.Install)).To(Succeed())
			e.WaitForOperatorReady(ctx, e.Config.GetIntervals("install", "operator-ready")...)
			s.SetupFailed = false
			if e.Profile.Operator.Deployment != "" {
				s.memory = e.StartMemorySampler(e.Config.Polling("default", "operator-memory"), e.Config.Timeout("default", "operator-memory"))
			}
		}, NodeTimeout(cfg.SpecTimeout(profile.TimeoutSetup)))

		AfterAll(func(ctx SpecContext) {
			s := get()
			s.StopMemorySampler()
			if s.Uninstalled || s.Env.Opts.SkipCleanup {
				return
			}
			By("uninstalling the operator")
			if err := s.Env.RunSteps(ctx, s.Env.Profile.Uninstall); err != nil {
				GinkgoWriter.Printf("uninstall failed: %v\n", err)
			}
		}, NodeTimeout(cfg.SpecTimeout(profile.TimeoutTeardown)))

		It("creates a cluster whose members are all ready and serve clients", Label("create"), func(ctx SpecContext) {
			CreateSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("create")))

		It("scales up and down, adding and removing etcd members", Label("scale"), func(ctx SpecContext) {
			ScaleSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("scale")))

		It("replaces dead members without losing quorum", Label("replace"), func(ctx SpecContext) {
			ReplaceSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("replace")))

		It("brings members back after their etcd process is killed", Label("kill"), func(ctx SpecContext) {
			KillSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("kill")))

		It("serves again after a majority of its members is lost at once", Label("quorum-loss"), func(ctx SpecContext) {
			QuorumLossSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("quorum-loss")))

		It("replaces a member on another node when its node is lost, keeping quorum", Label("node-loss"), func(ctx SpecContext) {
			NodeLossSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("node-loss")))

		It("converges with no extra member or object when the operator is killed mid-change", Label("operator-crash"), func(ctx SpecContext) {
			OperatorCrashSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("operator-crash")))

		It("upgrades etcd one minor at a time under linearizable traffic", Label("upgrade"), func(ctx SpecContext) {
			UpgradeSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("upgrade")))

		It("uses only the API access it needs", Label("rbac"), func(ctx SpecContext) {
			RBACSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("rbac")))

		It("leaves nothing behind after the cluster and the operator are deleted", Label("cleanup"), func(ctx SpecContext) {
			CleanupSpec(ctx, get())
		}, SpecTimeout(cfg.SpecTimeout("cleanup")))
	})

	ReportAfterSuite("etcdproof report", func(r Report) {
		get().GinkgoReport = r
	})
}

// newCluster creates a namespace (unless the profile pins one) and a cluster,
// and registers their deletion; failed specs dump their namespace first.
func newCluster(ctx context.Context, s *Suite, check string, size int, version string) *framework.EtcdCluster {
	return newClusterWith(ctx, s, check, size, version, clusterOptions{})
}

// clusterOptions are what some checks need beyond a plain cluster.
type clusterOptions struct {
	// durable asks for members whose data survives their pods.
	durable bool
	// beforeCR runs once the cluster's namespace exists, before anything
	// is created in it.
	beforeCR func(clusterNS string)
}

// newClusterWith is newCluster with opts.
func newClusterWith(ctx context.Context, s *Suite, check string, size int, version string, opts clusterOptions) *framework.EtcdCluster {
	e := s.Env
	ns := ""
	clusterNS := e.Profile.Operator.Namespace
	if e.Profile.Cluster.Namespace != "operator" {
		var err error
		ns, err = e.CreateNamespace(ctx, "etcdproof-"+check)
		Expect(err).NotTo(HaveOccurred())
		clusterNS = ns
		s.Namespaces = append(s.Namespaces, ns)
	}
	if opts.beforeCR != nil {
		opts.beforeCR(clusterNS)
	}
	name := fmt.Sprintf("%s-%d", check, time.Now().Unix()%100000)
	c, err := e.CreateCluster(ctx, framework.ClusterSpec{Namespace: clusterNS, Name: name, Size: size, Version: version, Durable: opts.durable})
	Expect(err).NotTo(HaveOccurred())
	c.SpecNamespace = ns
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			e.DumpNamespace(ctx, clusterNS, framework.SafeName(check))
		}
		if e.Opts.SkipCleanup {
			return
		}
		Expect(c.Delete(ctx)).To(Succeed())
		c.WaitForGone(ctx, e.Config.GetIntervals(check, "cr-deleted")...)
		if ns != "" {
			e.DeleteNamespace(ctx, ns, e.Config.GetIntervals(check, "namespace-deleted")...)
		}
	}, NodeTimeout(e.Config.SpecTimeout(profile.TimeoutClusterCleanup)))
	return c
}

// withTraffic runs fn while in-cluster clients put and get through the
// client Service, then validates and records the history of the phase.
func withTraffic(ctx context.Context, s *Suite, c *framework.EtcdCluster, check, phase string, limits framework.TrafficLimits, fn func()) phaseTraffic {
	return withTrafficPod(ctx, s, c, check, phase, limits, "", func(*framework.TrafficPod) { fn() })
}

// withTrafficPod is withTraffic for a check that needs to say where the
// clients run, on node onNode ("": where the scheduler puts them), and
// know it (the node-loss check must not stop their node).
func withTrafficPod(ctx context.Context, s *Suite, c *framework.EtcdCluster, check, phase string, limits framework.TrafficLimits, onNode string, fn func(*framework.TrafficPod)) phaseTraffic {
	e := s.Env
	By(fmt.Sprintf("starting traffic for %s", phase))
	tp, err := c.StartTraffic(ctx, framework.SafeName(check+"-"+phase), onNode)
	Expect(err).NotTo(HaveOccurred())
	finished := false
	defer func() {
		if finished {
			return
		}
		// fn failed: keep and report the history anyway, it often shows
		// what the failure did to clients. No assertion here: the spec
		// has already failed.
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if res, err := tp.StopAndValidate(stopCtx, check, phase, limits); err == nil {
			s.Report.Traffic(check, phase, res.Result, res.HistoryFile)
			s.Report.Note(check, "traffic during %s after the failure: %v", phase, res.Failures)
		}
	}()
	tp.WaitForTraffic(ctx, e.Config.GetIntervals(check, "traffic-ready")...)
	fn(tp)
	finished = true
	By(fmt.Sprintf("stopping traffic for %s and checking its history", phase))
	res, err := tp.StopAndValidate(ctx, check, phase, limits)
	Expect(err).NotTo(HaveOccurred())
	s.Report.Traffic(check, phase, res.Result, res.HistoryFile)
	s.Report.Timing(check, phase+"/longest-write-gap", res.Stats.LongestWriteGap, limits.MaxWriteGap)
	return phaseTraffic{TrafficResult: res, s: s, check: check}
}

// phaseTraffic is a validated traffic phase and the check it belongs to.
type phaseTraffic struct {
	framework.TrafficResult
	s     *Suite
	check string
}

// expectTraffic ends the spec with the traffic verdict: failed, or
// incomplete when the only problem is keys whose writes could not be read
// back at the end (nothing failed, but lost writes cannot be ruled out).
func expectTraffic(res phaseTraffic, phase string) {
	switch {
	case res.Passed():
	case res.Incomplete:
		Incomplete(res.s, res.check, "traffic during %s: %s (history %s)", phase, strings.Join(res.Failures, "; "), res.HistoryFile)
	default:
		Fail(fmt.Sprintf("traffic during %s: %s (history %s)", phase, strings.Join(res.Failures, "; "), res.HistoryFile), 1)
	}
}

// expectWithin records a timing and holds it to its budget.
func expectWithin(s *Suite, check, name string, d time.Duration, budgetName string) {
	budget := s.Env.Config.Budget(budgetName)
	s.Report.Timing(check, name, d, budget)
	ExpectWithOffset(1, d).To(BeNumerically("<=", budget), "%s took %s, budget %s", name, d.Round(time.Millisecond), budget)
}
