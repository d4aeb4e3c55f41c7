package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// restore carries out the cluster's EtcdRestore, as coreos v0.9.4 did: the
// cluster's members go first, then one member starts a new cluster on the
// backup's data, then the usual scaling grows it to spec.size. The old
// members are deleted before the new one starts, so clients of the cluster's
// Service never see two clusters at once. Each step is decided from the pods
// as they are: the seeded pod records the restore's UID and has a name of its
// own (desired.RestoreMemberName), so an operator that stops between two
// steps neither seeds twice nor deletes the restored members.
//
// Before any member is deleted, the backup is fetched and restored beside
// the running cluster (CheckBackup): a restore whose backup cannot be read
// (a typo in its path, a wrong Secret, a corrupt object) is refused and
// leaves the cluster as it was, instead of failing once the members are
// gone. A cluster with no member left to lose skips the check.
func restore(o Observed, opts Options, version string) (Action, bool) {
	if o.Restore == nil {
		return Action{}, false
	}
	r := *o.Restore
	if opts.RestoreUnchecked {
		r.Check = BackupChecked
	}
	var seeded *Pod
	var old, terminating []string
	for i, p := range o.Pods {
		switch {
		case p.Restore == r.UID:
			seeded = &o.Pods[i]
		case p.Terminating:
			terminating = append(terminating, p.Name)
		default:
			old = append(old, p.Name)
		}
	}
	what := r.What()
	if o.UsesPVC && seeded == nil && !r.Seeding {
		return Action{Kind: RefuseRestore, Reason: conditions.ReasonRestoreRefused,
			Message: what + ": not done, restoring a cluster whose members keep their data on PersistentVolumeClaims is not supported yet; nothing was changed"}, true
	}
	if o.SeedImage == "" && seeded == nil && !r.Seeding {
		return wait(conditions.ReasonRestoring, what+": not started, the operator does not know its own image, which fetches the backup: start it with --seed-image", PollSteady), true
	}
	switch {
	case seeded != nil && (seeded.Failed || seeded.SeedFailing != "") && len(o.Pods) == 1:
		// A restore that cannot read its backup is not retried blindly.
		why := "failed"
		if seeded.SeedFailing != "" {
			why = "could not restore the backup: " + seeded.SeedFailing
		}
		return Action{Kind: Fail, Reason: conditions.ReasonRestoring,
			Message: fmt.Sprintf("%s: the seeded member %s %s; delete the EtcdRestore and create it again to retry", what, seeded.Name, why)}, true
	case seeded == nil && r.Seeding && len(o.Pods) == 0:
		// The seeded pod was created but is not seen (yet): a cache that lags
		// behind the create, or a pod deleted by hand. Seeding again could
		// start a second cluster; a person decides.
		return wait(conditions.ReasonRestoring, fmt.Sprintf("%s: waiting for the seeded member's pod; if it was deleted, delete the EtcdRestore and create it again", what), PollInFlight), true
	case seeded != nil || r.Seeding:
		return Action{}, false // the restored cluster grows as any other
	case len(old) > 0 && r.Check == BackupUnusable:
		return Action{Kind: RefuseRestore, Reason: conditions.ReasonRestoreRefused,
			Message: fmt.Sprintf("%s: not done, the backup could not be restored (%s); no member was touched. Delete the EtcdRestore and create it again to retry",
				what, r.CheckFailed)}, true
	case len(old) > 0 && r.Check == BackupNotChecked:
		return Action{Kind: CheckBackup, Reason: conditions.ReasonRestoring,
			Message:      what + ": checking that the backup restores, beside the running cluster, before any member is touched",
			RequeueAfter: PollInFlight}, true
	case len(old) > 0 && r.Check == BackupChecking:
		return wait(conditions.ReasonRestoring, what+": checking that the backup restores, beside the running cluster, before any member is touched", PollInFlight), true
	case len(old) > 0:
		slices.Sort(old)
		return Action{Kind: DeleteForRestore, Names: old, Reason: conditions.ReasonRestoring,
			Message:      fmt.Sprintf("%s: deleting the members of the cluster it replaces (%s)", what, strings.Join(old, ", ")),
			RequeueAfter: PollInFlight}, true
	case len(terminating) > 0:
		return wait(conditions.ReasonRestoring, fmt.Sprintf("%s: waiting for the old members' pods to go (%s)", what, strings.Join(terminating, ", ")), PollInFlight), true
	}
	return Action{Kind: SeedFromBackup, Version: version, Reason: conditions.ReasonRestoring,
		Message: what + ": starting a new cluster on the backup's data", RequeueAfter: PollInFlight}, true
}
