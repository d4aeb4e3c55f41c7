package controller

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// TestRestoreLatestBackupReplacesOnlyTheEarlierRestore: the EtcdRestore an
// earlier restore left is deleted by its UID, then the new one created. A
// pass whose cache still shows the earlier one after another pass replaced
// it (or an operator restarted between the two writes) neither deletes the
// new one nor fails.
func TestRestoreLatestBackupReplacesOnlyTheEarlierRestore(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := etcdv1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "cluster-uid"}}
	earlier := func(uid types.UID) *etcdv1beta2.EtcdRestore {
		return &etcdv1beta2.EtcdRestore{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: uid},
			Spec:   etcdv1beta2.RestoreSpec{EtcdCluster: etcdv1beta2.EtcdClusterRef{Name: "c"}},
			Status: etcdv1beta2.RestoreStatus{Phase: etcdv1beta2.RestoreRestored}}
	}
	backup := &plan.Backup{EtcdBackup: "nightly", StorageType: etcdv1beta2.BackupStorageTypePVC,
		Source: etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "etcd.backup_v42"}},
		Path:   "backups/etcd.backup_v42", Revision: 42}

	for _, tt := range []struct {
		name     string
		onServer *etcdv1beta2.EtcdRestore // before the pass
		seen     *etcdv1beta2.EtcdRestore // the earlier restore as the pass saw it
		wantNew  bool                     // a new EtcdRestore replaced what was on the server
	}{
		{name: "none: created", wantNew: true},
		{name: "an earlier one: replaced", onServer: earlier("old"), seen: earlier("old"), wantNew: true},
		{name: "replaced already, the cache still shows the earlier one: left as it is", onServer: earlier("new"), seen: earlier("old")},
		{name: "deleted, the operator stopped before the create: created", seen: earlier("old"), wantNew: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tt.onServer != nil {
				b = b.WithObjects(tt.onServer.DeepCopy())
			}
			cl := interceptor.NewClient(b.Build(), interceptor.Funcs{
				// The fake client ignores UID preconditions; the API server refuses with a Conflict.
				Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					var do client.DeleteOptions
					do.ApplyOptions(opts)
					if do.Preconditions == nil || do.Preconditions.UID == nil {
						t.Errorf("the earlier EtcdRestore was deleted without naming its UID")
					}
					var current etcdv1beta2.EtcdRestore
					if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), &current); err == nil && current.UID != *do.Preconditions.UID {
						return apierrors.NewConflict(etcdv1beta2.GroupVersion.WithResource("etcdrestores").GroupResource(), obj.GetName(), nil)
					}
					return cl.Delete(ctx, obj, opts...)
				},
			})
			r := &Reconciler{Client: cl}
			obs := &observation{Observed: plan.Observed{RestoreFromBackup: backup}, earlierRestore: tt.seen}
			if err := r.restoreLatestBackup(ctx, c, obs, &plan.Action{Kind: plan.RestoreLatestBackup}); err != nil {
				t.Fatalf("restoreLatestBackup: %v", err)
			}
			var got etcdv1beta2.EtcdRestore
			if err := cl.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
				t.Fatal(err)
			}
			if !tt.wantNew {
				if got.UID != tt.onServer.UID {
					t.Fatalf("the EtcdRestore on the server was replaced: UID %s, want %s", got.UID, tt.onServer.UID)
				}
				return
			}
			if got.Status.Phase != "" || got.Spec.EtcdCluster.Name != "c" || got.Spec.PVC == nil || got.Spec.PVC.Path != "etcd.backup_v42" {
				t.Fatalf("EtcdRestore %+v: want a new one of backups/etcd.backup_v42 for c", got)
			}
			if owner := metav1.GetControllerOf(&got); owner == nil || owner.UID != c.UID {
				t.Errorf("owner %+v, want the EtcdCluster", owner)
			}
			if what := got.Annotations[desired.AnnotationRestoreAfterLoss]; !strings.Contains(what, "revision 42") {
				t.Errorf("annotation %q does not say what is restored", what)
			}
		})
	}
}

// TestRestoreAfterLossShowsInStatus: while the EtcdRestore the operator
// created after every member was lost is in progress, status.reason,
// Available (while no member answers) and Recovering say what is restored
// and what is lost; once it is done, Recovering is False again.
func TestRestoreAfterLossShowsInStatus(t *testing.T) {
	c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: 1},
		Spec:   etcdv1beta2.EtcdClusterSpec{Size: 3, Version: "3.5.21"},
		Status: etcdv1beta2.EtcdClusterStatus{Phase: etcdv1beta2.PhaseRunning}}
	restore := &plan.Restore{UID: "r-1", Source: "PVC backups/etcd.backup_v42",
		AfterLoss: "the latest backup of EtcdBackup nightly (PVC backups/etcd.backup_v42, etcd revision 42, taken 2026-01-01T12:00:00Z)"}
	obs := &observation{Observed: plan.Observed{Size: 3, Version: "3.5.21", Phase: etcdv1beta2.PhaseRunning, Restore: restore}}
	st := computeStatus(c, obs, plan.Action{Kind: plan.SeedFromBackup, Reason: conditions.ReasonRestoring}, nil)
	for _, cond := range []*metav1.Condition{
		meta.FindStatusCondition(st.Conditions, conditions.Available),
		meta.FindStatusCondition(st.Conditions, conditions.Recovering),
	} {
		if cond == nil || cond.Reason != conditions.ReasonRestoringFromBackup ||
			!strings.Contains(cond.Message, "revision 42") || !strings.Contains(cond.Message, "writes acknowledged after that backup are lost") {
			t.Errorf("condition %+v: want %s saying what is restored and lost", cond, conditions.ReasonRestoringFromBackup)
		}
	}
	if !strings.Contains(st.Reason, "EtcdBackup nightly") {
		t.Errorf("status.reason %q does not say what is restored", st.Reason)
	}

	c.Status = *st
	obs.Restore = nil // Restored
	st = computeStatus(c, obs, plan.Action{Kind: plan.Nothing, Reason: conditions.ReasonAtDesiredSize}, nil)
	if cond := meta.FindStatusCondition(st.Conditions, conditions.Recovering); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("Recovering %+v once the restore is done, want False", cond)
	}
	if st.Reason != "" {
		t.Errorf("status.reason %q once the restore is done, want none", st.Reason)
	}
}
