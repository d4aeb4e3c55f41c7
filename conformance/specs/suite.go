// Package specs holds the conformance checks. Each check is a function
// XSpec(ctx, func() XSpecInput) that gets exactly what it needs through its
// own input; Register wires them, in order, into one Ordered Ginkgo
// container with a label per check, and builds their inputs from the run's
// state, which it alone owns. Nothing here knows which operator it tests:
// everything operator-specific comes from the profile.
package specs

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best dot-imported.

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// Suite is what the runner hands to Register and reads once the specs ran.
// Register's setup and teardown write it; no check sees it.
type Suite struct {
	Env    *framework.Env
	Report *report.Recorder
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
// when the specs run. With floor, the floor (FloorSpec) is measured first.
func Register(cfg *profile.Config, get func() *Suite, floor bool) {
	run := &runState{get: get}
	Describe("etcd operator conformance", Ordered, ContinueOnFailure, func() {
		BeforeAll(func(ctx SpecContext) {
			run.setUp(ctx)
		}, NodeTimeout(cfg.SpecTimeout(profile.TimeoutSetup)))

		AfterAll(func(ctx SpecContext) {
			run.tearDown(ctx)
		}, NodeTimeout(cfg.SpecTimeout(profile.TimeoutTeardown)))

		if floor {
			It("measures the floor: the same member pods created, scaled and replaced with no operator", Label(FloorCheck), func(ctx SpecContext) {
				FloorSpec(ctx, func() FloorSpecInput {
					s := get()
					return FloorSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
				})
			}, SpecTimeout(cfg.SpecTimeout(FloorCheck)))
		}

		for _, c := range checks {
			It(c.text, Label(profile.LabelsOf(c.label)...), func(ctx SpecContext) {
				c.run(ctx, get(), run)
			}, SpecTimeout(cfg.SpecTimeout(c.label)))
		}
	})

	ReportAfterSuite("etcdproof report", func(r Report) {
		get().GinkgoReport = r
	})
}

// check is one conformance check as Register declares it: its label
// (profile.CheckLabels), what it proves, and how it runs with the run's
// state.
type check struct {
	label string
	text  string
	run   func(ctx SpecContext, s *Suite, run *runState)
}

// checks are the conformance checks in run order (profile.CheckLabels):
// rbac and cleanup last, they judge what the others made the operator do.
var checks = []check{
	{"create", "creates a cluster whose members are all ready and serve clients", func(ctx SpecContext, s *Suite, run *runState) {
		CreateSpec(ctx, func() CreateSpecInput { return CreateSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"scale", "scales up and down, adding and removing etcd members", func(ctx SpecContext, s *Suite, run *runState) {
		ScaleSpec(ctx, func() ScaleSpecInput { return ScaleSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"replace", "replaces dead members without losing quorum", func(ctx SpecContext, s *Suite, run *runState) {
		ReplaceSpec(ctx, func() ReplaceSpecInput { return ReplaceSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"insights", "tells of a member's replacement in Events and metrics that agree with etcd", func(ctx SpecContext, s *Suite, run *runState) {
		InsightsSpec(ctx, func() InsightsSpecInput { return InsightsSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"kill", "brings members back after their etcd process is killed", func(ctx SpecContext, s *Suite, run *runState) {
		KillSpec(ctx, func() KillSpecInput { return KillSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"partition", "keeps a member cut off the network for a while, and serves meanwhile", func(ctx SpecContext, s *Suite, run *runState) {
		PartitionSpec(ctx, func() PartitionSpecInput { return PartitionSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"quorum-loss", "serves again after a majority of its members is lost at once", func(ctx SpecContext, s *Suite, run *runState) {
		QuorumLossSpec(ctx, func() QuorumLossSpecInput { return QuorumLossSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"recreate-over-claims", "comes back with its data when its CR is created again over its claims", func(ctx SpecContext, s *Suite, run *runState) {
		RecreateOverClaimsSpec(ctx, func() RecreateOverClaimsSpecInput {
			return RecreateOverClaimsSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
		})
	}},
	{"node-loss", "replaces a member on another node when its node is lost, keeping quorum", func(ctx SpecContext, s *Suite, run *runState) {
		NodeLossSpec(ctx, func() NodeLossSpecInput { return NodeLossSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"drain", "keeps a quorum while the nodes of its members are drained one after another", func(ctx SpecContext, s *Suite, run *runState) {
		DrainSpec(ctx, func() DrainSpecInput { return DrainSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"drain-during-rollout", "keeps a quorum while nodes are drained during a scale-down and an upgrade", func(ctx SpecContext, s *Suite, run *runState) {
		DrainDuringRolloutSpec(ctx, func() DrainDuringRolloutSpecInput {
			return DrainDuringRolloutSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
		})
	}},
	{"operator-crash", "converges with no extra member or object when the operator is killed mid-change", func(ctx SpecContext, s *Suite, run *runState) {
		OperatorCrashSpec(ctx, func() OperatorCrashSpecInput {
			return OperatorCrashSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
		})
	}},
	{"operator-upgrade", "keeps every member running when the operator is replaced by a newer build", func(ctx SpecContext, s *Suite, run *runState) {
		OperatorUpgradeSpec(ctx, func() OperatorUpgradeSpecInput {
			return OperatorUpgradeSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
		})
	}},
	{"backup-restore", "restores exactly the data of a backup taken while clients write", func(ctx SpecContext, s *Suite, run *runState) {
		BackupRestoreSpec(ctx, func() BackupRestoreSpecInput {
			return BackupRestoreSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
		})
	}},
	{"bad-restore", "keeps serving with its data when asked to restore a backup that cannot be restored", func(ctx SpecContext, s *Suite, run *runState) {
		BadRestoreSpec(ctx, func() BadRestoreSpecInput { return BadRestoreSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"space", "replaces a lost member while its backend is full, and recovers when the claim says so", func(ctx SpecContext, s *Suite, run *runState) {
		SpaceSpec(ctx, func() SpaceSpecInput { return SpaceSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"upgrade", "upgrades etcd one minor at a time under linearizable traffic", func(ctx SpecContext, s *Suite, run *runState) {
		UpgradeSpec(ctx, func() UpgradeSpecInput { return UpgradeSpecInput{Env: s.Env, Report: s.Report, Namespaces: run} })
	}},
	{"rbac", "uses only the API access it needs", func(ctx SpecContext, s *Suite, run *runState) {
		RBACSpec(ctx, func() RBACSpecInput { return RBACSpecInput{Env: s.Env, Report: s.Report, Started: run.started} })
	}},
	{"cleanup", "leaves nothing behind after the cluster and the operator are deleted", func(ctx SpecContext, s *Suite, run *runState) {
		CleanupSpec(ctx, func() CleanupSpecInput {
			return CleanupSpecInput{Env: s.Env, Report: s.Report, Namespaces: run, Before: run.before, Started: run.started, Uninstall: run.uninstall}
		})
	}},
}
