package controller

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdbackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdbackups/status,verbs=get;update;patch

// BackupReconciler takes the backups EtcdBackups ask for: once, or every
// backupIntervalInSecond. Each backup runs in a pod of its own
// (desired.BackupPod); its result comes back as the pod's termination
// message, goes into the EtcdBackup's status, and the pod is deleted.
type BackupReconciler struct {
	Client client.Client
	// Image is the operator's own image, which the backup pods run.
	Image string
	// StatusWithObject writes status with the object from the start: the
	// grant lacks etcdbackups/status (coreos' Role), so the status
	// subresource is not even tried, and no refused request is made.
	StatusWithObject bool
	// MaxConcurrentReconciles: see Reconciler.
	MaxConcurrentReconciles int
	// Recorder records a Warning Event for each failed backup (nil: none).
	Recorder recorder.EventRecorder
	// StartDeadline: see DefaultBackupStartDeadline (0: that).
	StartDeadline time.Duration
	Now           func() time.Time
}

// DefaultBackupStartDeadline is how long a backup pod may wait for a
// kubelet to take it (unschedulable: no node has room, none matches, its
// claim's zone has none) before the attempt fails. The pod's
// activeDeadlineSeconds counts only from the kubelet's start, so such a pod
// was waited on for ever and a periodic backup never ran again. Five
// minutes let it wait behind other pods and for a cluster autoscaler to add
// a node (a few minutes); image pull and volume attach come after the
// kubelet took it and are bounded by activeDeadlineSeconds.
const DefaultBackupStartDeadline = 5 * time.Minute

func (r *BackupReconciler) startDeadline() time.Duration {
	if r.StartDeadline > 0 {
		return r.StartDeadline
	}
	return DefaultBackupStartDeadline
}

func (r *BackupReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the reconciler; its pods wake it up when they end.
func (r *BackupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&etcdv1beta2.EtcdBackup{}).
		Owns(&corev1.Pod{}).
		Named("etcdbackup").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers(r.MaxConcurrentReconciles)}).
		Complete(r)
}

// Reconcile runs one pass: finish an ended backup pod, or start the next
// backup when it is due.
func (r *BackupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &etcdv1beta2.EtcdBackup{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if b.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // its pods are owned by it
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(b.Namespace), client.MatchingLabels{desired.LabelBackup: b.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing backup pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, b) || p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			if p.Status.StartTime != nil {
				return ctrl.Result{}, nil // a kubelet runs it: its end wakes us
			}
			if left := p.CreationTimestamp.Add(r.startDeadline()).Sub(r.now()); left > 0 {
				return ctrl.Result{RequeueAfter: left}, nil
			}
			return ctrl.Result{}, r.notStarted(ctx, b, p)
		}
		return ctrl.Result{}, r.finish(ctx, b, p)
	}
	due, ok := r.due(b)
	if !ok {
		return ctrl.Result{}, nil // a one-shot backup that ran
	}
	if wait := due.Sub(r.now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if r.Image == "" {
		return ctrl.Result{}, r.fail(ctx, b, "the operator does not know its own image, which takes the backup: start it with --seed-image")
	}
	pod := desired.BackupPod(b, r.Image, due)
	if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating backup pod %s: %w", pod.Name, err)
	}
	log.FromContext(ctx).Info("backup started", "pod", pod.Name)
	return ctrl.Result{}, nil
}

// due says when b's next backup is due; false when none is (a one-shot
// backup that ran, stored or not, as with coreos).
func (r *BackupReconciler) due(b *etcdv1beta2.EtcdBackup) (time.Time, bool) {
	last := b.Status.LastAttemptDate
	if last == nil {
		return b.CreationTimestamp.Time, true
	}
	interval := desired.BackupInterval(b)
	if interval == 0 {
		return time.Time{}, false
	}
	return last.Add(interval), true
}

// finish records what the ended pod p did and deletes it.
func (r *BackupReconciler) finish(ctx context.Context, b *etcdv1beta2.EtcdBackup, p *corev1.Pod) error {
	want := b.Status
	// When the pod ended, not when this pass runs: a pass that finishes
	// the same pod again (its status write seen late) must not move the
	// date that restores name the backup by.
	now := metav1.NewTime(endedAt(p, r.now()))
	want.LastAttemptDate = &now
	msg, ended := terminationMessage(p)
	res, err := backup.ParseResult(msg)
	switch {
	case p.Status.Phase == corev1.PodSucceeded && err == nil:
		want.Succeeded, want.Reason = true, ""
		want.EtcdRevision, want.EtcdVersion, want.LastBackupPath = res.EtcdRevision, res.EtcdVersion, backupPath(b, res.Path)
		want.LastSuccessDate = &now
	default:
		want.Succeeded = false
		want.Reason = "backup failed: " + firstNonEmpty(strings.TrimSpace(msg), p.Status.Message, p.Status.Reason, ended)
	}
	return r.ended(ctx, b, p, want)
}

// endedAt is when p's last container ended, or now when no kubelet said.
func endedAt(p *corev1.Pod, now time.Time) time.Time {
	var last time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	if last.IsZero() {
		return now
	}
	return last
}

// notStarted fails the attempt whose pod p no kubelet took within the start
// deadline, saying why the scheduler left it, and deletes the pod; a
// periodic backup is tried again an interval later.
func (r *BackupReconciler) notStarted(ctx context.Context, b *etcdv1beta2.EtcdBackup, p *corev1.Pod) error {
	want := b.Status
	now := metav1.NewTime(r.now())
	want.LastAttemptDate = &now
	want.Succeeded = false
	want.Reason = fmt.Sprintf("backup failed: the backup pod %s did not start within %s: %s", p.Name, r.startDeadline(), unscheduledWhy(p))
	return r.ended(ctx, b, p, want)
}

// ended stores the attempt's status, records a Warning Event when it
// failed, and deletes its pod.
func (r *BackupReconciler) ended(ctx context.Context, b *etcdv1beta2.EtcdBackup, p *corev1.Pod, want etcdv1beta2.BackupStatus) error {
	if err := r.writeStatus(ctx, b, want); err != nil {
		return err
	}
	log.FromContext(ctx).Info("backup ended", "pod", p.Name, "succeeded", want.Succeeded, "revision", want.EtcdRevision, "reason", want.Reason)
	if !want.Succeeded && r.Recorder != nil {
		r.Recorder.Eventf(b, p, corev1.EventTypeWarning, conditions.EventBackupFailed, "Backup", "%s", want.Reason)
	}
	if err := r.Client.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting backup pod %s: %w", p.Name, err)
	}
	return nil
}

// unscheduledWhy is what the scheduler said about a pod no kubelet took.
func unscheduledWhy(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			return c.Message
		}
	}
	if p.Spec.NodeName != "" {
		return "scheduled to node " + p.Spec.NodeName + ", whose kubelet never started it"
	}
	return "no node took it"
}

// backupPath is where the backup stored at stored is, for people: S3's
// "<bucket>/<key>" as it is; a file's path in the backup pod becomes
// "<claim>/<path in the volume>", which an EtcdRestore's pvc source names.
func backupPath(b *etcdv1beta2.EtcdBackup, stored string) string {
	if b.Spec.PVC == nil || b.Spec.StorageType != etcdv1beta2.BackupStorageTypePVC {
		return stored
	}
	return b.Spec.PVC.ClaimName + "/" + path.Join(path.Dir(b.Spec.PVC.Path), path.Base(stored))
}

// fail records a backup that cannot be taken.
func (r *BackupReconciler) fail(ctx context.Context, b *etcdv1beta2.EtcdBackup, why string) error {
	if !b.Status.Succeeded && b.Status.Reason == why {
		return nil
	}
	want := b.Status
	want.Succeeded, want.Reason = false, why
	return r.writeStatus(ctx, b, want)
}

// writeStatus stores want as b's status: through the status subresource, or
// with the object where there is none (the CRD coreos' backup-operator
// registered) or the grant lacks it (coreos' Role).
func (r *BackupReconciler) writeStatus(ctx context.Context, b *etcdv1beta2.EtcdBackup, want etcdv1beta2.BackupStatus) error {
	b.Status = want
	var err error
	if r.StatusWithObject {
		err = r.Client.Update(ctx, b)
	} else if err = r.Client.Status().Update(ctx, b); apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		err = r.Client.Update(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("writing the EtcdBackup's status: %w", err)
	}
	return nil
}

// terminationMessage is what the backup container left, and how it ended.
func terminationMessage(p *corev1.Pod) (msg, ended string) {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == desired.BackupContainerName && s.State.Terminated != nil {
			t := s.State.Terminated
			return t.Message, fmt.Sprintf("the backup container exited with code %d (%s)", t.ExitCode, t.Reason)
		}
	}
	return "", "the backup pod ended before its container ran"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
