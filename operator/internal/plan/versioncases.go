package plan

import "github.com/etcdproof/etcdproof/operator/internal/conditions"

// VersionChange is one change of spec.version and the verdict on it.
type VersionChange struct {
	Name string
	// OldSpec is spec.version before the change, Current the
	// status.currentVersion reported then ("" before the operator reported one).
	OldSpec, Current string
	// NewSpec is the spec.version asked for.
	NewSpec string
	// Refusal is the reason of the refusal, "" when the change is accepted.
	Refusal string
}

// VersionChanges is the single source of truth for which spec.version changes
// are accepted. Both sides check every row: the CRD's CEL rules
// (controller.TestCRDVersionChanges, against a real API server) and the
// operator's own refusal (plan.TestVersionChanges: CheckVersionChange on the
// version the members run), so the API never accepts a version the operator
// then refuses, nor the other way round, and clusters without CEL behave the same.
//
// Both compare with the version the members run: status.currentVersion, or,
// before one is reported, the previous spec.version (what the members were
// created with). Going back to status.currentVersion therefore always works:
// it aborts a rollout. Only changes are listed: an update that keeps
// spec.version (a status write, a scale) is never refused for it.
var VersionChanges = []VersionChange{
	{"patch upgrade", "3.5.17", "3.5.17", "3.5.21", ""},
	{"one minor up", "3.5.36", "3.5.36", "3.6.16", ""},
	{"pre-release of the next minor", "3.5.36", "3.5.36", "3.6.0-rc.1", ""},
	{"3.5 to 3.6 from the first patch etcd allows", "3.5.32", "3.5.32", "3.6.16", ""},
	{"3.5 to 3.6 from an older patch", "3.5.21", "3.5.21", "3.6.16", conditions.ReasonOldPatchRefused},
	{"3.5 to 3.6 while a member still runs an older patch", "3.5.36", "3.5.21", "3.6.16", conditions.ReasonOldPatchRefused},
	{"a 3.6 pre-release from an older patch", "3.5.21", "3.5.21", "3.6.0-rc.1", conditions.ReasonOldPatchRefused},
	{"3.4 to 3.5 from any patch", "3.4.25", "3.4.25", "3.5.36", ""},
	{"skipping a minor", "3.4.37", "3.4.37", "3.6.16", conditions.ReasonVersionSkewRefused},
	{"next major", "3.6.16", "3.6.16", "4.0.0", conditions.ReasonVersionSkewRefused},
	{"patch downgrade", "3.5.21", "3.5.21", "3.5.17", conditions.ReasonDowngradeRefused},
	{"minor downgrade", "3.6.16", "3.6.16", "3.5.21", conditions.ReasonDowngradeRefused},

	{"abort a minor upgrade", "3.6.16", "3.5.21", "3.5.21", ""},
	{"abort a patch upgrade", "3.5.21", "3.5.17", "3.5.17", ""},
	{"roll back a patch release members did not become healthy on", "3.5.36", "3.5.33", "3.5.33", ""},
	{"abort to a newer patch of the running minor", "3.6.16", "3.5.21", "3.5.22", ""},
	{"retarget a rollout to another patch of the new minor", "3.6.16", "3.5.36", "3.6.10", ""},
	{"abort below the running version", "3.6.16", "3.5.21", "3.5.17", conditions.ReasonDowngradeRefused},
	{"one minor past a rollout still running", "3.5.21", "3.4.37", "3.6.16", conditions.ReasonVersionSkewRefused},

	{"nothing reported yet: one minor up", "3.5.36", "", "3.6.16", ""},
	{"nothing reported yet: 3.5 to 3.6 from an older patch", "3.5.21", "", "3.6.16", conditions.ReasonOldPatchRefused},
	{"nothing reported yet: skipping a minor", "3.4.37", "", "3.6.16", conditions.ReasonVersionSkewRefused},
	{"nothing reported yet: downgrade", "3.5.21", "", "3.4.37", conditions.ReasonDowngradeRefused},
	{"nothing reported yet: patch downgrade", "3.5.21", "", "3.5.17", conditions.ReasonDowngradeRefused},
}
