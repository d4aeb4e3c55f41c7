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

		It("creates a cluster whose members are all ready and serve clients", Label(profile.LabelsOf("create")...), func(ctx SpecContext) {
			CreateSpec(ctx, func() CreateSpecInput {
				s := get()
				return CreateSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("create")))

		It("scales up and down, adding and removing etcd members", Label(profile.LabelsOf("scale")...), func(ctx SpecContext) {
			ScaleSpec(ctx, func() ScaleSpecInput {
				s := get()
				return ScaleSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("scale")))

		It("replaces dead members without losing quorum", Label(profile.LabelsOf("replace")...), func(ctx SpecContext) {
			ReplaceSpec(ctx, func() ReplaceSpecInput {
				s := get()
				return ReplaceSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("replace")))

		It("tells of a member's replacement in Events and metrics that agree with etcd", Label(profile.LabelsOf("insights")...), func(ctx SpecContext) {
			InsightsSpec(ctx, func() InsightsSpecInput {
				s := get()
				return InsightsSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("insights")))

		It("brings members back after their etcd process is killed", Label(profile.LabelsOf("kill")...), func(ctx SpecContext) {
			KillSpec(ctx, func() KillSpecInput {
				s := get()
				return KillSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("kill")))

		It("keeps a member cut off the network for a while, and serves meanwhile", Label(profile.LabelsOf("partition")...), func(ctx SpecContext) {
			PartitionSpec(ctx, func() PartitionSpecInput {
				s := get()
				return PartitionSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("partition")))

		It("replaces a lost member while its backend is full, and recovers when the claim says so", Label(profile.LabelsOf("space")...), func(ctx SpecContext) {
			SpaceSpec(ctx, func() SpaceSpecInput {
				s := get()
				return SpaceSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("space")))

		It("serves again after a majority of its members is lost at once", Label(profile.LabelsOf("quorum-loss")...), func(ctx SpecContext) {
			QuorumLossSpec(ctx, func() QuorumLossSpecInput {
				s := get()
				return QuorumLossSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("quorum-loss")))

		It("comes back with its data when its CR is created again over its claims", Label(profile.LabelsOf("recreate-over-claims")...), func(ctx SpecContext) {
			RecreateOverClaimsSpec(ctx, func() RecreateOverClaimsSpecInput {
				s := get()
				return RecreateOverClaimsSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("recreate-over-claims")))

		It("replaces a member on another node when its node is lost, keeping quorum", Label(profile.LabelsOf("node-loss")...), func(ctx SpecContext) {
			NodeLossSpec(ctx, func() NodeLossSpecInput {
				s := get()
				return NodeLossSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("node-loss")))

		It("keeps a quorum while the nodes of its members are drained one after another", Label(profile.LabelsOf("drain")...), func(ctx SpecContext) {
			DrainSpec(ctx, func() DrainSpecInput {
				s := get()
				return DrainSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("drain")))

		It("keeps a quorum while nodes are drained during a scale-down and an upgrade", Label(profile.LabelsOf("drain-during-rollout")...), func(ctx SpecContext) {
			DrainDuringRolloutSpec(ctx, func() DrainDuringRolloutSpecInput {
				s := get()
				return DrainDuringRolloutSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("drain-during-rollout")))

		It("converges with no extra member or object when the operator is killed mid-change", Label(profile.LabelsOf("operator-crash")...), func(ctx SpecContext) {
			OperatorCrashSpec(ctx, func() OperatorCrashSpecInput {
				s := get()
				return OperatorCrashSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("operator-crash")))

		It("keeps every member running when the operator is replaced by a newer build", Label(profile.LabelsOf("operator-upgrade")...), func(ctx SpecContext) {
			OperatorUpgradeSpec(ctx, func() OperatorUpgradeSpecInput {
				s := get()
				return OperatorUpgradeSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("operator-upgrade")))

		It("restores exactly the data of a backup taken while clients write", Label(profile.LabelsOf("backup-restore")...), func(ctx SpecContext) {
			BackupRestoreSpec(ctx, func() BackupRestoreSpecInput {
				s := get()
				return BackupRestoreSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("backup-restore")))

		It("keeps serving with its data when asked to restore a backup that cannot be restored", Label(profile.LabelsOf("bad-restore")...), func(ctx SpecContext) {
			BadRestoreSpec(ctx, func() BadRestoreSpecInput {
				s := get()
				return BadRestoreSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("bad-restore")))

		It("upgrades etcd one minor at a time under linearizable traffic", Label(profile.LabelsOf("upgrade")...), func(ctx SpecContext) {
			UpgradeSpec(ctx, func() UpgradeSpecInput {
				s := get()
				return UpgradeSpecInput{Env: s.Env, Report: s.Report, Namespaces: run}
			})
		}, SpecTimeout(cfg.SpecTimeout("upgrade")))

		It("uses only the API access it needs", Label(profile.LabelsOf("rbac")...), func(ctx SpecContext) {
			RBACSpec(ctx, func() RBACSpecInput {
				s := get()
				return RBACSpecInput{Env: s.Env, Report: s.Report, Started: run.started}
			})
		}, SpecTimeout(cfg.SpecTimeout("rbac")))

		It("leaves nothing behind after the cluster and the operator are deleted", Label(profile.LabelsOf("cleanup")...), func(ctx SpecContext) {
			CleanupSpec(ctx, func() CleanupSpecInput {
				s := get()
				return CleanupSpecInput{Env: s.Env, Report: s.Report, Namespaces: run, Before: run.before, Started: run.started, Uninstall: run.uninstall}
			})
		}, SpecTimeout(cfg.SpecTimeout("cleanup")))
	})

	ReportAfterSuite("etcdproof report", func(r Report) {
		get().GinkgoReport = r
	})
}
