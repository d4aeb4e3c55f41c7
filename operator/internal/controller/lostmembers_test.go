package controller_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// restoringCluster starts the operator (with EtcdRestores and the backup
// controller) and the fake kubelet in a new namespace, and a 3-member
// emptyDir cluster there that opted in to restoring from EtcdBackup backup.
func restoringCluster(t *testing.T, backup string) *etcdv1beta2.EtcdCluster {
	t.Helper()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage, Restores: true})
	startBackups(t, ns)
	c := newCluster(ns, "lost", 3, "3.5.21")
	c.Annotations = map[string]string{desired.AnnotationRestoreFromBackup: backup}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	return c
}

// TestAllMembersLostRestoresFromTheLatestBackup: a cluster on emptyDir
// annotated with a periodic EtcdBackup loses every member pod at once. The
// operator restores it from that EtcdBackup's latest backup through an
// EtcdRestore named after the cluster and owned by it (coreos' rule), which
// the usual restore steps carry out: the cluster comes back at its size
// with the key written before the backup and without the one written
// after, and the Event names the backup's path, revision and time. Lost
// again, it is restored again, the first EtcdRestore replaced.
func TestAllMembersLostRestoresFromTheLatestBackup(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := restoringCluster(t, "periodic")
	kept := putKey(t, c)
	claim := newClaim(t, c.Namespace, "backups")
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// Periodic, so the path stored has coreos' "_v<revision>_<time>" suffix;
	// the next backup is due in an hour, after the test.
	b := &etcdv1beta2.EtcdBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "periodic", Namespace: c.Namespace},
		Spec: etcdv1beta2.BackupSpec{
			EtcdEndpoints: endpoints,
			StorageType:   etcdv1beta2.BackupStorageTypePVC,
			BackupPolicy:  &etcdv1beta2.BackupPolicy{BackupIntervalInSecond: 3600},
			BackupSource:  etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: claim.Name, Path: "etcd.backup"}},
		},
	}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitBackup(t, b, time.Time{})
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Put(ctx, "written-after-the-backup", "lost")
		return err
	})

	killed := killPods(t, c, 3)
	restore := &etcdv1beta2.EtcdRestore{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}}
	waitRestored(t, restore)
	waitConverged(t, c, 3, false)
	getKey(t, c, kept)
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.Get(ctx, "written-after-the-backup")
		if err != nil {
			return err
		}
		if len(resp.Kvs) != 0 {
			t.Errorf("a key written after the backup survived the restore")
		}
		return nil
	})
	pods, err := memberPods(ctx, c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if killed[p.UID] {
			t.Errorf("pod %s of the lost cluster is still there", p.Name)
		}
	}

	file := strings.TrimPrefix(b.Status.LastBackupPath, claim.Name+"/")
	if restore.Spec.BackupStorageType != etcdv1beta2.BackupStorageTypePVC || restore.Spec.PVC == nil ||
		restore.Spec.PVC.ClaimName != claim.Name || restore.Spec.PVC.Path != file || !strings.HasPrefix(file, "etcd.backup_v") {
		t.Errorf("EtcdRestore spec %+v: want the claim %s and path %s (status.lastBackupPath %s)", restore.Spec, claim.Name, file, b.Status.LastBackupPath)
	}
	if owner := metav1.GetControllerOf(restore); owner == nil || owner.UID != c.UID {
		t.Errorf("EtcdRestore owner %+v: want the EtcdCluster %s", owner, c.UID)
	}
	revision := "revision " + strconv.FormatInt(b.Status.EtcdRevision, 10)
	taken := b.Status.LastSuccessDate.UTC().Format(time.RFC3339)
	if eventsRecorded(t) {
		waitFor(t, "an Event saying what was restored and what is lost", func() error {
			var events corev1.EventList
			if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
				return err
			}
			var notes []string
			for _, e := range events.Items {
				if e.Reason != conditions.EventRestoring {
					continue
				}
				if strings.Contains(e.Message, b.Status.LastBackupPath) && strings.Contains(e.Message, revision) &&
					strings.Contains(e.Message, taken) && strings.Contains(e.Message, "writes acknowledged after that backup are lost") {
					return nil
				}
				notes = append(notes, e.Message)
			}
			return fmt.Errorf("%s Events: %q", conditions.EventRestoring, notes)
		})
	}

	// Lost again: the EtcdRestore of the first restore, Restored, is
	// replaced by a new one, and the cluster is restored again.
	first := restore.UID
	killPods(t, c, 3)
	waitForLong(t, "a new EtcdRestore to say Restored", 2*time.Minute, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(restore), restore); err != nil {
			return err
		}
		if restore.UID == first || restore.Status.Phase != etcdv1beta2.RestoreRestored {
			return fmt.Errorf("EtcdRestore %s: %+v", restore.UID, restore.Status)
		}
		return nil
	})
	waitConverged(t, c, 3, false)
	getKey(t, c, kept)
}

// TestAllMembersLostWithAMissingBackupIsNotRestored: the annotation names an
// EtcdBackup that does not exist. The cluster fails as without the
// annotation (no new, empty cluster), its status says the restore was not
// done and why, and no EtcdRestore is created.
func TestAllMembersLostWithAMissingBackupIsNotRestored(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := restoringCluster(t, "missing")
	killed := killPods(t, c, 3)
	waitFor(t, "Failed, QuorumLost, saying the EtcdBackup does not exist", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
		if got.Status.Phase != etcdv1beta2.PhaseFailed || available == nil || available.Reason != conditions.ReasonQuorumLost ||
			!strings.Contains(got.Status.Reason, "EtcdBackup missing") || !strings.Contains(got.Status.Reason, "does not exist") {
			return fmt.Errorf("phase %s, reason %q, Available %+v", got.Status.Phase, got.Status.Reason, available)
		}
		return nil
	})
	// The decision that failed the cluster is the one that would have
	// created the EtcdRestore: none was.
	err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &etcdv1beta2.EtcdRestore{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("EtcdRestore %s: %v, want none", c.Name, err)
	}
	pods, err := memberPods(ctx, c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if !killed[p.UID] {
			t.Errorf("pod %s was created after every member was lost", p.Name)
		}
	}
}
