package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup/backuptest"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
)

// coreosModule holds the examples coreos v0.9.4 documents its backup and
// restore operators with.
const coreosModule = "github.com/coreos/etcd-operator@v0.9.4"

// coreosExample reads one of coreos v0.9.4's example files from the Go
// module proxy (never copied into this repository) and fills its
// placeholders the way its docs tell a user to. endpoint and forcePathStyle
// are added to s3: the examples target AWS itself.
func coreosExample(t *testing.T, file string, fill map[string]string, s3Endpoint string) *unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", coreosModule)
	cmd.Dir = t.TempDir() // outside this module: no go.mod to update
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s (the examples are read from the module proxy): %v", coreosModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s printed %s: %v", coreosModule, out, err)
	}
	raw, err := os.ReadFile(filepath.Join(mod.Dir, file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for placeholder, value := range fill {
		if !strings.Contains(text, placeholder) {
			t.Fatalf("%s has no %s: not the example this test was written for", file, placeholder)
		}
		text = strings.ReplaceAll(text, placeholder, value)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := unstructured.SetNestedField(u.Object, s3Endpoint, "spec", "s3", "endpoint"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, true, "spec", "s3", "forcePathStyle"); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCoreosBackupAndRestoreExamples applies coreos v0.9.4's own
// example/etcd-backup-operator and example/etcd-restore-operator custom
// resources, with only the endpoints, paths and Secret filled in: the
// one-shot and the periodic backup land in the S3 store, and the restore
// brings example-etcd-cluster back with the one-shot backup's data.
func TestCoreosBackupAndRestoreExamples(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	s3 := backuptest.StartS3(t)
	ctx := context.Background()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: operatorImage, Restores: true})
	startBackups(t, ns)

	// coreos' awsSecret holds the AWS shared files: credentials and config.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: ns}, Data: map[string][]byte{}}
	for _, name := range []string{"credentials", "config"} {
		data, err := os.ReadFile(filepath.Join(s3.AWSDir, name))
		if err != nil {
			t.Fatal(err)
		}
		secret.Data[name] = data
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}

	c := newCluster(ns, "example-etcd-cluster", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	kept := putKey(t, c)
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	endpointList, err := json.Marshal(endpoints)
	if err != nil {
		t.Fatal(err)
	}

	oneShotPath := s3.Bucket + "/example/etcd.backup"
	for _, ex := range []struct{ file, path string }{
		{"example/etcd-backup-operator/backup_cr.yaml", oneShotPath},
		{"example/etcd-backup-operator/periodic_backup_cr.yaml", s3.Bucket + "/example/periodic.backup"},
	} {
		u := coreosExample(t, ex.file, map[string]string{
			"[<etcd-cluster-endpoints>]": string(endpointList), "<full-s3-path>": ex.path, "<aws-secret>": secret.Name,
		}, s3.Endpoint)
		u.SetNamespace(ns)
		if err := k8s.Create(ctx, u); err != nil {
			t.Fatalf("%s refused: %v", ex.file, err)
		}
		b := &etcdv1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: ns}}
		waitBackup(t, b, time.Time{})
		if !strings.HasPrefix(b.Status.LastBackupPath, ex.path) || b.Status.EtcdRevision == 0 {
			t.Errorf("%s: status %+v, want a backup under %s with its revision", ex.file, b.Status, ex.path)
		}
		stored, err := s3.Store(t).Get(ctx, strings.TrimPrefix(b.Status.LastBackupPath, s3.Bucket+"/"))
		if err != nil {
			t.Fatalf("%s: the backup it reports is not in the store: %v", ex.file, err)
		}
		_ = stored.Close()
	}

	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Put(ctx, "written-after-the-backup", "lost")
		return err
	})
	u := coreosExample(t, "example/etcd-restore-operator/restore_cr.yaml",
		map[string]string{"<full-s3-path>": oneShotPath, "<aws-secret>": secret.Name}, s3.Endpoint)
	u.SetNamespace(ns)
	if err := k8s.Create(ctx, u); err != nil {
		t.Fatalf("the restore example refused: %v", err)
	}
	restore := &etcdv1beta2.EtcdRestore{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), restore); err != nil {
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
			return fmt.Errorf("a key written after the backup survived the restore")
		}
		return nil
	})
}
