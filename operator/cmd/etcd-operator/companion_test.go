package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// coreosBackupRestore holds coreos' backup and restore operators' Deployments
// as the conformance profile applies them.
var coreosBackupRestore = filepath.Join(coreosInstall, "backup-restore")

// TestCoreosCompanionDeploymentsRun runs the programs coreos' backup and
// restore Deployments name, with their arguments (and the --create-crd=false
// that newer clusters add): each must start, say where its kinds are served,
// and end cleanly when stopped. A program the image lacks, or a flag coreos
// took and this one refuses, would leave those Deployments crash-looping.
func TestCoreosCompanionDeploymentsRun(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(coreosBackupRestore, "base", "operators.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var seen int
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			break
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, extra := range [][]string{nil, {"--create-crd=false"}} {
				seen++
				args := append(append([]string{}, c.Command[1:]...), c.Args...)
				args = append(args, extra...)
				var logged strings.Builder
				log := funcr.New(func(prefix, args string) { logged.WriteString(args) }, funcr.Options{})
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				var stderr bytes.Buffer
				if code := runCompanion(ctx, "/usr/local/bin/"+c.Command[0], args, &stderr, log); code != 0 {
					t.Errorf("%s %v: exit code %d (%s)", c.Command[0], args, code, stderr.String())
				}
				kinds, ok := companionOf(c.Command[0])
				if !ok || !strings.Contains(logged.String(), kinds+" are served by etcd-operator") {
					t.Errorf("%s %v: companion %v, logged %q", c.Command[0], args, ok, logged.String())
				}
			}
		}
	}
	if seen != 4 {
		t.Fatalf("%d runs of coreos' backup and restore Deployments, want 4 (2 programs × 2 command lines)", seen)
	}

	var stderr bytes.Buffer
	if code := runCompanion(context.Background(), "etcd-backup-operator", []string{"--bogus"}, &stderr, funcr.New(func(string, string) {}, funcr.Options{})); code != 2 ||
		!strings.Contains(stderr.String(), "bogus") {
		t.Errorf("a flag coreos' program did not take: exit code %d, stderr %q", code, stderr.String())
	}
	if _, ok := companionOf("etcd-operator"); ok {
		t.Error("etcd-operator itself taken for a companion")
	}
}

// TestServesBackupsInstalledAfterStart: coreos' walkthroughs install the
// EtcdBackup and EtcdRestore CRDs after etcd-operator runs. The operator,
// started without them under coreos' Role, must stop once they are served
// (so the kubelet starts it again), and serve EtcdBackups when started again,
// writing their status with no request that Role refuses (it grants
// etcdbackups, not etcdbackups/status).
func TestServesBackupsInstalledAfterStart(t *testing.T) {
	gates, restCfg, admin, asOperator := startCoreosAPIServer(t)
	ctx := context.Background()
	ns := coreosNamespace
	apply(t, admin, ns, filepath.Join(coreosInstall, "current", "crd.yaml"))
	waitServed(t, restCfg)
	refused := &refusedRequests{}
	asOperator.Wrap(refused.wrap)

	start := func() (context.CancelFunc, chan error) {
		o, _, err := parseFlags([]string{"--create-crd=false", "--seed-image=etcdproof/etcd-operator:dev"})
		if err != nil {
			t.Fatal(err)
		}
		o.metricsAddr, o.probeAddr, o.skipNameValidation = "0", "0", true
		o.servableCheck = 100 * time.Millisecond
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- run(runCtx, asOperator, gates, o) }()
		return cancel, done
	}

	cancel, done := start()
	select {
	case err := <-done:
		t.Fatalf("the operator stopped before the backup CRDs were installed: %v", err)
	case <-time.After(2 * time.Second):
	}
	apply(t, admin, ns, filepath.Join(coreosBackupRestore, "current", "crd.yaml"))
	select {
	case err := <-done:
		if !errors.Is(err, errNowServable) {
			t.Fatalf("the operator stopped with %v, want %v", err, errNowServable)
		}
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the operator did not stop within a minute of the backup CRDs being installed")
	}
	cancel()

	cancel, done = start()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	backup := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": etcdv1beta2.GroupVersion.String(), "kind": "EtcdBackup",
		"metadata": map[string]any{"name": "once", "namespace": ns},
		"spec": map[string]any{"etcdEndpoints": []any{"http://example-client:2379"}, "storageType": "S3",
			"s3": map[string]any{"path": "backups/once", "awsSecret": "aws"}},
	}}
	if err := admin.Create(ctx, backup); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	waitFor(t, "a backup pod for the EtcdBackup created after the restart", func() error {
		var pods corev1.PodList
		if err := admin.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{desired.LabelBackup: "once"}); err != nil {
			return err
		}
		if len(pods.Items) != 1 {
			return errors.New("no backup pod yet")
		}
		pod = pods.Items[0]
		return nil
	})
	// The pod ends as a kubelet would end it, with nothing stored.
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Message = "no S3 store in this test"
	if err := admin.Status().Update(ctx, &pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed backup recorded in the EtcdBackup's status", func() error {
		var b etcdv1beta2.EtcdBackup
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "once"}, &b); err != nil {
			return err
		}
		if b.Status.Succeeded || !strings.Contains(b.Status.Reason, "no S3 store in this test") {
			return fmt.Errorf("status %+v", b.Status)
		}
		return nil
	})
	if got := refused.list(); len(got) > 0 {
		t.Errorf("requests coreos' Role refused: %v", got)
	}
}

// refusedRequests records the requests the API server refused (403).
type refusedRequests struct {
	mu  sync.Mutex
	got []string
}

func (r *refusedRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden && !strings.Contains(req.URL.Path, "selfsubjectaccessreviews") {
			r.mu.Lock()
			r.got = append(r.got, req.Method+" "+req.URL.Path)
			r.mu.Unlock()
		}
		return resp, err
	})
}

func (r *refusedRequests) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
