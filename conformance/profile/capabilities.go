package profile

import "slices"

// Capabilities are the optional behaviours the operator claims. A check of a
// capability the profile does not claim does not run and is reported as not
// claimed, which keeps the run from passing while that check is required.
type Capabilities struct {
	ScaleUp               bool `json:"scaleUp"`
	ScaleDown             bool `json:"scaleDown"`
	DeadMemberReplacement bool `json:"deadMemberReplacement"`
	Upgrade               bool `json:"upgrade"`
	UpgradeChain          bool `json:"upgradeChain"`
	// Kill: members whose etcd process is killed (SIGKILL) come back.
	Kill bool `json:"kill"`
	// Partition: a member cut off the network for a while (less than the
	// operator's deadlines) keeps its place, the others serve meanwhile,
	// and it catches up once healed.
	Partition bool `json:"partition"`
	// Space: a cluster filled to its backend quota (NOSPACE raised) still
	// has a lost member replaced, with no quorum lost: asked of every
	// profile ("" and SpaceSurvives say the same). SpaceRecovers also
	// claims the operator compacts, defragments and disarms on its own
	// once the application deleted data.
	Space SpaceClaim `json:"space,omitempty"`
	// QuorumLoss: the cluster serves again after a majority of its member
	// pods is deleted at once. QuorumLossDurable claims that every
	// acknowledged write survives (clusters created with .Durable, e.g. on
	// claims); QuorumLossLossy only that it serves again, with the writes
	// that survived counted in the report.
	QuorumLoss QuorumLossClaim `json:"quorumLoss,omitempty"`
	// OperatorCrash: the operator, killed again and again while it scales
	// and upgrades a cluster, converges with no extra member or object.
	OperatorCrash bool `json:"operatorCrash"`
	// NodeLoss: a member whose node stops (its kind node container, on a
	// cluster with a worker per member) is replaced on another node within
	// budget, with quorum kept throughout.
	NodeLoss bool `json:"nodeLoss"`
	// Drain: each node holding a member can be drained (kubectl drain, on
	// a cluster with a worker per member) with a quorum of healthy voters
	// kept throughout, the evicted members replaced on the other nodes.
	Drain bool `json:"drain"`
	// OperatorUpgrade: the operator replaced by a newer build (the
	// profile's upgradeOperator steps) restarts no member, and the new
	// build takes over the running cluster.
	OperatorUpgrade bool `json:"operatorUpgrade"`
	// BackupRestore: a backup taken while clients write, restored later,
	// brings back exactly the backup's data. BackupRestoreCoreosAPI claims
	// it through coreos v0.9.4's EtcdBackup and EtcdRestore (S3 storage).
	BackupRestore BackupRestoreClaim `json:"backupRestore,omitempty"`
	// Insights: the operator records Events on the cluster's CR about
	// what it does, and serves metrics about the cluster that agree with
	// etcd (insights.go); nil claims nothing.
	Insights *Insights `json:"insights,omitempty"`
}

// SpaceClaim is what a profile claims about a full backend.
type SpaceClaim string

// The space claims; "" claims only what every profile is asked
// (SpaceSurvives).
const (
	SpaceSurvives SpaceClaim = "survives"
	SpaceRecovers SpaceClaim = "recovers"
)

// BackupRestoreClaim is how a profile backs up and restores.
type BackupRestoreClaim string

// The backup-restore claims; "" claims nothing.
const BackupRestoreCoreosAPI BackupRestoreClaim = "coreos-api"

// QuorumLossClaim is what a profile claims about quorum loss.
type QuorumLossClaim string

// The quorum-loss claims; "" claims nothing.
const (
	QuorumLossDurable QuorumLossClaim = "durable"
	QuorumLossLossy   QuorumLossClaim = "lossy"
)

// Claims reports whether the profile claims the capability a check
// required only when claimed needs (ClaimedChecks); the book's checks are
// claimed through the fields above.
func (c Capabilities) Claims(check string) bool {
	if !slices.Contains(ClaimedChecks, check) {
		return false
	}
	_, claimed := c.capabilityOf(check)
	return claimed
}

// capabilityOf names the capability a check runs under, as its spec asks
// for it, and whether the profile claims it; "" for the checks every
// profile runs (create, rbac, cleanup). A check whose capability is not
// claimed is reported not claimed, never failed.
func (c Capabilities) capabilityOf(check string) (name string, claimed bool) {
	switch check {
	case "scale":
		return "scaleUp", c.ScaleUp
	case "replace":
		return "deadMemberReplacement", c.DeadMemberReplacement
	case "upgrade":
		return "upgrade", c.Upgrade
	case "kill":
		return "kill", c.Kill
	case "partition":
		return "partition", c.Partition
	case "space":
		// Asked of every profile: a full disk is a fault every etcd
		// cluster meets; the claim only adds "recovers".
		return "space", true
	case "quorum-loss":
		return "quorumLoss", c.QuorumLoss != ""
	case "recreate-over-claims":
		// Asked of every profile whose members keep their data on claims.
		return "quorumLoss", c.QuorumLoss == QuorumLossDurable
	case "node-loss":
		return "nodeLoss", c.NodeLoss
	case "drain", "drain-during-rollout":
		return "drain", c.Drain
	case "operator-crash":
		return "operatorCrash", c.OperatorCrash
	case "operator-upgrade":
		return "operatorUpgrade", c.OperatorUpgrade
	case "backup-restore", "bad-restore":
		return "backupRestore", c.BackupRestore != ""
	case "insights":
		return "insights", c.Insights != nil
	}
	return "", true
}

// CheckLabels are the Ginkgo labels of the checks, in run order (rbac and
// cleanup last: they judge what the others made the operator do).
var CheckLabels = []string{"create", "scale", "replace", "insights", "kill", "partition", "quorum-loss", "recreate-over-claims", "node-loss", "drain", "drain-during-rollout", "operator-crash", "operator-upgrade", "backup-restore", "bad-restore", "space", "upgrade", "rbac", "cleanup"}

// BookChecks are the six checks of the book, required unless --require says
// otherwise; FaultChecks (the label group "faults") and the insights check
// are required when the profile claims them: ClaimedChecks.
var (
	BookChecks    = []string{"create", "scale", "replace", "upgrade", "rbac", "cleanup"}
	FaultChecks   = []string{"kill", "partition", "quorum-loss", "recreate-over-claims", "node-loss", "drain", "drain-during-rollout", "operator-crash", "operator-upgrade", "backup-restore", "bad-restore", "space"}
	ClaimedChecks = slices.Concat(FaultChecks, []string{"insights"})
)

// CheckGroups are labels that select a group of checks in a label filter
// (--label-filter faults): each check carries its group's label too.
var CheckGroups = map[string][]string{"book": BookChecks, "faults": FaultChecks}

// LabelsOf is a check's Ginkgo labels: its own and its group's.
func LabelsOf(check string) []string {
	labels := []string{check}
	for group, checks := range CheckGroups {
		if slices.Contains(checks, check) {
			labels = append(labels, group)
		}
	}
	return labels
}

// OperatorFrameworkLevels are the values of a CSV's capabilities
// annotation, level 1 to 5 (report.CapabilityLevels says which checks
// prove each).
var OperatorFrameworkLevels = []string{"Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot"}
