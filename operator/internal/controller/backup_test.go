package controller_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

const operatorImage = "etcdproof/etcd-operator:test"

// startBackups runs the backup controller in a manager watching namespace
// until the test ends.
func startBackups(t *testing.T, namespace string) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&controller.BackupReconciler{Client: mgr.GetClient(), Image: operatorImage}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("backup manager: %v", err)
		}
	})
}

// newClaim creates a claim for backups in ns.
func newClaim(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := k8s.Create(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	return claim
}

// waitBackup waits until b's status has a stored backup newer than after.
func waitBackup(t *testing.T, b *etcdv1beta2.EtcdBackup, after time.Time) {
	t.Helper()
	waitFor(t, "the EtcdBackup to say succeeded", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		st := b.Status
		if !st.Succeeded || st.LastSuccessDate == nil || !st.LastSuccessDate.After(after) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// TestBackupThenRestore takes a one-shot backup with an EtcdBackup (in a
// backup pod, onto a claim), writes more, and restores it with an
// EtcdRestore: the status records the backup's revision and path, the
// backup pod is gone, and the restored cluster holds the key written before
// the backup and not the one written after.
func TestBackupThenRestore(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage, Restores: true})
	startBackups(t, ns)
	c := newCluster(ns, "backed-up", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	kept := putKey(t, c)
	claim := newClaim(t, ns, "backups")
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	b := &etcdv1beta2.EtcdBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec: etcdv1beta2.BackupSpec{
			EtcdEndpoints: endpoints,
			StorageType:   etcdv1beta2.BackupStorageTypePVC,
			BackupSource:  etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: claim.Name, Path: "etcd.backup"}},
		},
	}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitBackup(t, b, time.Time{})
	// The test's members are embedded etcd of this module's version, whatever spec.version says.
	if b.Status.EtcdRevision == 0 || b.Status.EtcdVersion == "" || b.Status.LastBackupPath != "backups/etcd.backup" {
		t.Errorf("status %+v: want the revision, the version and backups/etcd.backup", b.Status)
	}
	waitFor(t, "the backup pod to be deleted", func() error {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{desired.LabelBackup: b.Name}); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("backup pods left: %s", pods.Items[0].Name)
		}
		return nil
	})
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Put(ctx, "written-after-the-backup", "lost")
		return err
	})

	restore := &etcdv1beta2.EtcdRestore{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns},
		Spec: etcdv1beta2.RestoreSpec{
			BackupStorageType: etcdv1beta2.BackupStorageTypePVC,
			RestoreSource:     etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: claim.Name, Path: "etcd.backup"}},
			EtcdCluster:       etcdv1beta2.EtcdClusterRef{Name: c.Name},
		},
	}
	if err := k8s.Create(ctx, restore); err != nil {
		t.Fatal(err)
	}
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
}

// TestPeriodicBackupKeepsMaxBackups takes a backup every second with
// maxBackups 2: each one gets coreos' "_v<revision>_<time>" name, and once
// three were taken only the two newest are left on the claim.
func TestPeriodicBackupKeepsMaxBackups(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	kubelet := runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage})
	startBackups(t, ns)
	c := newCluster(ns, "periodic", 1, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 1, false)
	claim := newClaim(t, ns, "backups")
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	b := &etcdv1beta2.EtcdBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "periodic", Namespace: ns},
		Spec: etcdv1beta2.BackupSpec{
			EtcdEndpoints: endpoints,
			StorageType:   etcdv1beta2.BackupStorageTypePVC,
			BackupPolicy:  &etcdv1beta2.BackupPolicy{BackupIntervalInSecond: 1, MaxBackups: 2},
			BackupSource:  etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: claim.Name, Path: "etcd.backup"}},
		},
	}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	var revision int64
	paths := map[string]bool{}
	for range 3 {
		putKey(t, c) // a new revision for each backup
		// A backup taken before the put may end after it (the success date
		// has whole seconds): wait for one that holds the put.
		waitFor(t, "a backup of the new revision", func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			if st := b.Status; !st.Succeeded || st.EtcdRevision <= revision {
				return fmt.Errorf("status %+v, want a backup past revision %d", st, revision)
			}
			return nil
		})
		revision = b.Status.EtcdRevision
		paths[b.Status.LastBackupPath] = true
	}
	if len(paths) != 3 {
		t.Fatalf("three backups stored under %d paths: %v", len(paths), paths)
	}
	dir, err := kubelet.claimDir(ctx, ns, claim.Name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two backups left on the claim", func() error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "etcd.backup_v") {
				names = append(names, e.Name())
			}
		}
		if len(names) != 2 {
			return fmt.Errorf("backups on the claim: %v", names)
		}
		return nil
	})
}
