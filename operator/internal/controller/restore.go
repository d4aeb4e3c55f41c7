package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The restore of a cluster from a backup: an EtcdRestore named like the
// cluster (coreos v0.9.4's rule). The cluster's own reconciler carries it
// out (plan.restore), so the operator needs no grant to delete or create
// EtcdClusters: the object stays, its members and data are replaced.

// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdrestores,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdrestores/status,verbs=get;update;patch

// clusterRestore returns the cluster's EtcdRestore (named like it), in
// progress or not; nil when there is none, or EtcdRestores are not served.
func (r *Reconciler) clusterRestore(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*etcdv1beta2.EtcdRestore, error) {
	if !r.Restores {
		return nil, nil
	}
	er := &etcdv1beta2.EtcdRestore{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(c), er); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return er, nil
}

// inProgress reports whether er is a restore of c still to be carried out.
func inProgress(c *etcdv1beta2.EtcdCluster, er *etcdv1beta2.EtcdRestore) bool {
	return er != nil && er.DeletionTimestamp == nil && er.Spec.EtcdCluster.Name == c.Name &&
		er.Status.Phase != etcdv1beta2.RestoreRestored && er.Status.Phase != etcdv1beta2.RestoreFailed
}

// planRestore is what the plan needs to know of er, in progress.
func planRestore(er *etcdv1beta2.EtcdRestore) *plan.Restore {
	if er == nil {
		return nil
	}
	return &plan.Restore{UID: string(er.UID), Seeding: er.Status.Phase == etcdv1beta2.RestoreSeeding, Source: desired.RestoreSource(er.Spec),
		AfterLoss: er.Annotations[desired.AnnotationRestoreAfterLoss]}
}

// readBackupCheck fills p's Check from the pod that checks er's backup
// (desired.RestoreVerifyPod), if there is one.
func (r *Reconciler) readBackupCheck(ctx context.Context, c *etcdv1beta2.EtcdCluster, er *etcdv1beta2.EtcdRestore, p *plan.Restore) error {
	var pod corev1.Pod
	key := client.ObjectKey{Namespace: c.Namespace, Name: desired.RestoreVerifyPodName(er.Name, string(er.UID))}
	if err := r.Client.Get(ctx, key, &pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading the backup check's pod %s: %w", key.Name, err)
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		p.Check = plan.BackupChecked
	case corev1.PodFailed:
		p.Check, p.CheckFailed = plan.BackupUnusable, backupCheckFailure(&pod)
	default:
		p.Check = plan.BackupChecking
	}
	return nil
}

// backupCheckFailure is why the backup check's pod failed, in its own
// words where it left some.
func backupCheckFailure(p *corev1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; s.Name == desired.RestoreVerifyContainerName && t != nil {
			return firstNonEmpty(lastLine(t.Message), fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason))
		}
	}
	return firstNonEmpty(p.Status.Message, p.Status.Reason, "its pod failed before it ran")
}

// lastLine is the last non-empty line of a log: a failed command's error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// checkBackup starts the pod that checks the EtcdRestore's backup beside
// the running cluster.
func (r *Reconciler) checkBackup(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	er := obs.restore
	if er == nil {
		return nil
	}
	pod := desired.RestoreVerifyPod(c, r.SeedImage, er)
	if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the backup check's pod %s: %w", pod.Name, err)
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventRestoring, "CheckBackup", "%s (pod %s)", a.Message, pod.Name)
	return nil
}

// deleteForRestore deletes the members of the cluster being restored.
func (r *Reconciler) deleteForRestore(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	for _, name := range a.Names {
		if err := r.deletePod(ctx, obs, name); err != nil {
			return err
		}
	}
	r.event(c, corev1.EventTypeWarning, conditions.EventRestoring, "Delete", "%s", a.Message)
	return nil
}

// seedFromBackup creates the member that starts the restored cluster, then
// records on the EtcdRestore that seeding began.
func (r *Reconciler) seedFromBackup(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	er := obs.restore
	if er == nil {
		return nil
	}
	name := desired.RestoreMemberName(c.Name, string(er.UID))
	pod := desired.RestoreSeedPod(c, desired.Member{Name: name, Version: a.Version}, r.SeedImage, er, r.Unsafe)
	if r.Options.RestoreWithoutData {
		pod.Spec.InitContainers = nil // UNSAFE, self-test only: an empty cluster, "restored"
	}
	if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the restored member %s: %w", name, err)
	}
	r.created.add(c, name, r.now())
	r.event(c, corev1.EventTypeWarning, conditions.EventRestoring, "Seed", "%s. New member: %s", a.Message, name)
	want := er.Status
	want.Phase, want.Member, want.Reason = etcdv1beta2.RestoreSeeding, name, ""
	return r.writeRestoreStatus(ctx, er, want)
}

// reportRestore updates the EtcdRestore after a pass: Restored once the
// restored cluster has spec.size ready members, Failed when the plan gave
// up on it.
func (r *Reconciler) reportRestore(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a plan.Action, status *etcdv1beta2.EtcdClusterStatus) {
	er := obs.restore
	if er == nil {
		return
	}
	want := er.Status
	switch {
	case a.Kind == plan.Fail && a.Reason == conditions.ReasonRestoring, a.Kind == plan.RefuseRestore:
		want.Phase, want.Reason = etcdv1beta2.RestoreFailed, a.Message
	case er.Status.Phase == "":
		want.Phase = etcdv1beta2.RestorePending
	case er.Status.Phase == etcdv1beta2.RestoreSeeding && restored(c, obs, status):
		want.Phase, want.Succeeded = etcdv1beta2.RestoreRestored, true
	}
	if want == er.Status {
		return
	}
	if err := r.writeRestoreStatus(ctx, er, want); err != nil {
		log.FromContext(ctx).Info("writing the EtcdRestore's status failed", "error", err.Error())
		return
	}
	if want.Phase == etcdv1beta2.RestoreRestored && obs.Restore != nil {
		r.event(c, corev1.EventTypeNormal, conditions.EventRestoring, "Restored", "%s: done, %d members ready",
			obs.Restore.What(), len(status.Members.Ready))
	}
}

// restored reports whether the restored cluster is whole: spec.size members,
// every one ready. The old members were gone before the seeded one started.
func restored(c *etcdv1beta2.EtcdCluster, obs *observation, status *etcdv1beta2.EtcdClusterStatus) bool {
	return status.Size == c.Spec.Size && len(status.Members.Ready) == c.Spec.Size && len(obs.pods) == c.Spec.Size
}

// seedFailing is what p's seed init container said when it failed, once it
// failed again after a retry (the kubelet restarts it): "" before.
func seedFailing(p *corev1.Pod) string {
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name != desired.SeedContainerName || s.RestartCount < 1 {
			continue
		}
		for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode != 0 {
				return firstNonEmpty(strings.TrimSpace(t.Message), fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason))
			}
		}
	}
	return ""
}

// writeRestoreStatus stores want as er's status: through the status
// subresource, or with the object where there is none (the CRD coreos'
// restore-operator registered) or the grant lacks it (coreos' Role).
func (r *Reconciler) writeRestoreStatus(ctx context.Context, er *etcdv1beta2.EtcdRestore, want etcdv1beta2.RestoreStatus) error {
	er.Status = want
	var err error
	if r.RestoreStatusWithObject {
		err = r.Client.Update(ctx, er)
	} else if err = r.Client.Status().Update(ctx, er); apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		err = r.Client.Update(ctx, er)
	}
	return err
}
