package plan

import (
	"fmt"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// MembersLost reports that every member pod of a cluster that ran on
// emptyDir is gone (or going), and its data with it. Members on claims are
// not lost: they come back on their volumes. Neither are members whose
// claims are there while the spec asks for none (see claimsWithoutClaimSpec).
func MembersLost(o Observed) bool {
	return !o.UsesPVC && len(o.PVCs) == 0 && ran(o) && everyPodGone(o)
}

// claimsWithoutClaimSpec reports that every member pod of a cluster that ran
// is gone while the claims of its members, which hold their data, are there
// but spec.pod.persistentVolumeClaimSpec is not: the claim spec was removed
// where no CRD rule refuses that (Kubernetes before 1.25, the v1beta1 CRD,
// coreos' own CRD). The cluster waits for it to be set back.
func claimsWithoutClaimSpec(o Observed) bool {
	return !o.UsesPVC && len(o.PVCs) > 0 && ran(o) && everyPodGone(o)
}

// ran reports whether the cluster has run (its phase says so).
func ran(o Observed) bool {
	return o.Phase == etcdv1beta2.PhaseRunning || o.Phase == etcdv1beta2.PhaseFailed
}

// everyPodGone reports whether every member pod is gone or going.
func everyPodGone(o Observed) bool {
	for _, p := range o.Pods {
		if !p.Terminating {
			return false
		}
	}
	return true
}

// afterMembersLost decides what follows the loss of every member (see
// MembersLost). Without the cluster's consent nothing is started: a new,
// empty cluster under the old name would let clients carry on as if
// nothing was lost, so the cluster fails. With it
// (desired.AnnotationRestoreFromBackup) the cluster is restored from its
// EtcdBackup's latest backup by an EtcdRestore, which the restore steps
// (restore) carry out as any other. An EtcdRestore left from an earlier
// restore is replaced; one in progress is left to finish. Each pass decides
// from the EtcdRestore as it is, so an operator that stops between the
// delete and the create is followed by one that creates.
func afterMembersLost(o Observed) Action {
	const lost = "every member pod is gone and members kept their data on emptyDir: the data is lost"
	b := o.RestoreFromBackup
	if b == nil {
		return Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost,
			Message: lost + "; delete and recreate the EtcdCluster to start a new cluster"}
	}
	notRestored := func(why string) Action {
		return Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost, Message: fmt.Sprintf(
			"%s. It cannot be restored from EtcdBackup %s (annotation %s): %s; delete and recreate the EtcdCluster to start a new cluster",
			lost, b.EtcdBackup, desired.AnnotationRestoreFromBackup, why)}
	}
	what := fmt.Sprintf("every member pod is gone and members kept their data on emptyDir: restoring the cluster from %s; writes acknowledged after that backup are lost",
		b.Describe())
	switch er := o.EarlierRestore; {
	case o.Restore != nil:
		return wait(conditions.ReasonRestoringFromBackup, fmt.Sprintf(
			"every member pod is gone; the cluster's EtcdRestore is in progress: %s", o.Restore.What()), PollInFlight)
	case b.Unusable != "":
		return notRestored(b.Unusable)
	case o.SeedImage == "":
		return notRestored("the operator does not know its own image, which fetches the backup: start it with --seed-image")
	case er != nil && er.Deleting:
		return wait(conditions.ReasonRestoringFromBackup, what+": waiting for the earlier EtcdRestore, being deleted, to go", PollInFlight)
	case er != nil:
		what += fmt.Sprintf(". The cluster's EtcdRestore of an earlier restore (%s) is replaced", er.State)
	}
	return Action{Kind: RestoreLatestBackup, From: b.EtcdBackup, Reason: conditions.ReasonRestoringFromBackup,
		Message: what, RequeueAfter: PollInFlight}
}

// What says what the restore does, for messages.
func (r Restore) What() string {
	if r.AfterLoss != "" {
		return fmt.Sprintf("restoring the cluster from %s after every member was lost; writes acknowledged after that backup are lost", r.AfterLoss)
	}
	return fmt.Sprintf("restoring the cluster from the backup %s", r.Source)
}

// RestoringAfterLoss says, while an EtcdRestore the operator created after
// every member was lost is in progress, what it restores and what is lost.
func RestoringAfterLoss(o Observed) (string, bool) {
	if o.Restore == nil || o.Restore.AfterLoss == "" {
		return "", false
	}
	return o.Restore.What(), true
}
