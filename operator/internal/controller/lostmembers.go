package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The restore of a cluster on emptyDir that lost every member, from the
// latest backup of the EtcdBackup it names (desired.AnnotationRestoreFromBackup).
// The operator only creates the EtcdRestore (replacing one an earlier restore
// left); the restore steps carry it out as any other (restore.go).
//
// create and delete on etcdrestores are for that alone, so a run in which no
// such cluster loses every member shows them unused. Reading the EtcdBackup
// needs get on etcdbackups, which the backup controller's grant has (backup.go).
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdrestores,verbs=create;delete

// latestBackup reads what EtcdBackup name says of its latest backup. From
// the API server, not the cache: the manager caches no EtcdBackups unless it
// runs the backup controller, and a get is all the operator needs. An error
// that may pass is returned (the pass is retried); one that will not, such
// as a grant without get on etcdbackups, makes the backup unusable, which
// the condition says.
func (r *Reconciler) latestBackup(ctx context.Context, c *etcdv1beta2.EtcdCluster, name string) (*plan.Backup, error) {
	if !r.Restores {
		return &plan.Backup{EtcdBackup: name, Unusable: "the operator does not serve EtcdRestores (their CRD is not installed, or its grant does not allow reading them)"}, nil
	}
	b := &etcdv1beta2.EtcdBackup{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err):
		b = nil
	case apierrors.IsForbidden(err) || meta.IsNoMatchError(err):
		return &plan.Backup{EtcdBackup: name, Unusable: "the EtcdBackup cannot be read: " + err.Error()}, nil
	case err != nil:
		return nil, fmt.Errorf("reading EtcdBackup %s: %w", name, err)
	}
	latest := plan.LatestBackup(name, b)
	return &latest, nil
}

// planEarlierRestore is what the plan needs to know of er, the cluster's
// EtcdRestore when it is not in progress.
func planEarlierRestore(c *etcdv1beta2.EtcdCluster, er *etcdv1beta2.EtcdRestore) *plan.EarlierRestore {
	state := string(er.Status.Phase)
	switch {
	case er.DeletionTimestamp != nil:
		state = "being deleted"
	case er.Spec.EtcdCluster.Name != c.Name:
		state = "for EtcdCluster " + er.Spec.EtcdCluster.Name
	}
	return &plan.EarlierRestore{State: state, Deleting: er.DeletionTimestamp != nil}
}

// restoreLatestBackup creates the EtcdRestore of the cluster's latest
// backup, after deleting the one an earlier restore left. That delete names
// the earlier one's UID: a cache that still shows it after an earlier pass
// replaced it must not delete its successor. An EtcdRestore that already
// exists was created by such a pass: the next pass sees it in progress.
func (r *Reconciler) restoreLatestBackup(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	b := obs.RestoreFromBackup
	if b == nil || b.Unusable != "" {
		return nil
	}
	if er := obs.earlierRestore; er != nil {
		err := r.Client.Delete(ctx, er, client.Preconditions{UID: &er.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the EtcdRestore of an earlier restore: %w", err)
		}
	}
	restore := desired.RestoreAfterLoss(c, b.StorageType, b.Source, b.Describe())
	if err := r.Client.Create(ctx, restore); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating EtcdRestore %s: %w", restore.Name, err)
	}
	r.event(c, corev1.EventTypeWarning, conditions.EventRestoring, "Create", "%s. Created EtcdRestore %s", a.Message, restore.Name)
	return nil
}
