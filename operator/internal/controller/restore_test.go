package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
)

// TestRestoreFromBackupOnClaim takes a backup of a running cluster onto a
// claim, writes more, and restores the cluster from the backup with an
// EtcdRestore: the cluster comes back at its size with exactly the backup's
// data (the key written before is there, the one written after is not), on
// new members only, and the EtcdRestore says Restored.
func TestRestoreFromBackupOnClaim(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	kubelet := runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage, Restores: true})
	c := newCluster(ns, "restored", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	kept := putKey(t, c)
	oldPods, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}

	claim := newClaim(t, ns, "backups")
	dir, err := kubelet.claimDir(ctx, ns, claim.Name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := backup.Take(ctx, backup.Config{Endpoints: endpoints, Store: backup.FileStore{Dir: dir}, Key: "etcd.backup"})
	if err != nil {
		t.Fatalf("taking the backup: %v", err)
	}
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Put(ctx, "written-after-the-backup", "lost")
		return err
	})

	restore := restoreFromClaim(c, claim.Name, "etcd.backup")
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
			t.Errorf("a key written after the backup survived the restore: %s", resp.Kvs[0].Value)
		}
		if resp.Header.Revision < res.EtcdRevision {
			t.Errorf("restored revision %d is older than the backup's %d", resp.Header.Revision, res.EtcdRevision)
		}
		return nil
	})
	pods, _, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var newPods []string
	for _, p := range pods {
		newPods = append(newPods, p.Name)
	}
	for _, p := range oldPods {
		if slices.Contains(newPods, p.Name) {
			t.Errorf("member pod %s of the cluster that was replaced is still there: %v", p.Name, newPods)
		}
	}
	if !slices.Contains(newPods, restore.Status.Member) {
		t.Errorf("the seeded member %s is not among the members %v", restore.Status.Member, newPods)
	}
}

// restoreFromClaim is the EtcdRestore of c from the backup file at path on
// claim.
func restoreFromClaim(c *etcdv1beta2.EtcdCluster, claim, path string) *etcdv1beta2.EtcdRestore {
	return &etcdv1beta2.EtcdRestore{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace},
		Spec: etcdv1beta2.RestoreSpec{
			BackupStorageType: etcdv1beta2.BackupStorageTypePVC,
			RestoreSource:     etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: claim, Path: path}},
			EtcdCluster:       etcdv1beta2.EtcdClusterRef{Name: c.Name},
		},
	}
}

// waitRestored waits until restore says Restored.
func waitRestored(t *testing.T, restore *etcdv1beta2.EtcdRestore) {
	t.Helper()
	waitForLong(t, "the EtcdRestore to say Restored", 2*time.Minute, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(restore), restore); err != nil {
			return err
		}
		if restore.Status.Phase != etcdv1beta2.RestoreRestored || !restore.Status.Succeeded {
			return fmt.Errorf("status %+v", restore.Status)
		}
		return nil
	})
}

// TestBadRestoreLeavesTheCluster: an EtcdRestore whose backup cannot be
// restored (the file is not there; the bytes are not a snapshot) is
// refused after a check beside the running cluster: the EtcdRestore says
// Failed and why, and the cluster keeps every member pod and its data.
// Before, every member pod was deleted first and the restore failed only
// once the seeded member could not read the backup: the cluster was gone.
func TestBadRestoreLeavesTheCluster(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	kubelet := runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage, Restores: true})
	claim := newClaim(t, ns, "backups")
	dir, err := kubelet.claimDir(ctx, ns, claim.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "garbage.backup"), []byte("not an etcd snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"no-such.backup", "garbage.backup"} {
		t.Run(path, func(t *testing.T) {
			c := newCluster(ns, "kept-"+strings.TrimSuffix(path, ".backup"), 3, "3.5.21")
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			waitConverged(t, c, 3, false)
			key := putKey(t, c)
			before, _, err := memberEndpoints(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			restore := restoreFromClaim(c, claim.Name, path)
			if err := k8s.Create(ctx, restore); err != nil {
				t.Fatal(err)
			}
			waitForLong(t, "the EtcdRestore to say Failed, with why", 2*time.Minute, func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(restore), restore); err != nil {
					return err
				}
				if restore.Status.Phase != etcdv1beta2.RestoreFailed || !strings.Contains(restore.Status.Reason, "no member was touched") {
					return fmt.Errorf("status %+v", restore.Status)
				}
				return nil
			})
			t.Logf("refused: %s", restore.Status.Reason)
			after, _, err := memberEndpoints(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if b, a := podUIDs(before), podUIDs(after); !slices.Equal(b, a) {
				t.Fatalf("member pods changed by a refused restore: before %v, after %v", b, a)
			}
			getKey(t, c, key)
			var got etcdv1beta2.EtcdCluster
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != etcdv1beta2.PhaseRunning {
				t.Fatalf("cluster phase %s after a refused restore, want Running", got.Status.Phase)
			}
		})
	}
}

func podUIDs(pods []corev1.Pod) []string {
	var uids []string
	for _, p := range pods {
		uids = append(uids, p.Name+"/"+string(p.UID))
	}
	slices.Sort(uids)
	return uids
}
