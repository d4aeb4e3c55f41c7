package framework

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The repository's kustomizations load in kubectl apply -k's order, with
// their patches (the cluster-wide install deletes the namespaced Role and
// RoleBinding) and components (the legacy install's v1beta1 CRD).
func TestLoadManifestsBuildsKustomizations(t *testing.T) {
	for _, tt := range []struct {
		dir        string
		first, crd string
		want, gone []string
	}{
		{
			dir: "../../manifests/cluster-wide", first: "Namespace etcd-operator-system", crd: "apiextensions.k8s.io/v1",
			want: []string{"Role etcd-operator-system/etcd-operator-leader-election", "ClusterRole etcd-operator", "ClusterRoleBinding etcd-operator",
				"ServiceAccount etcd-operator-system/etcd-operator", "Deployment etcd-operator-system/etcd-operator"},
			gone: []string{"Role etcd-operator-system/etcd-operator", "RoleBinding etcd-operator-system/etcd-operator"},
		},
		{
			dir: "../../manifests/legacy/cluster-wide", first: "Namespace etcd-operator-system", crd: "apiextensions.k8s.io/v1beta1",
			want: []string{"ClusterRole etcd-operator", "Deployment etcd-operator-system/etcd-operator"},
			gone: []string{"Role etcd-operator-system/etcd-operator"},
		},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			objs, err := loadManifests(context.Background(), tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, m := range objs {
				names[m.String()] = true
			}
			if objs[0].String() != tt.first {
				t.Errorf("first object = %s, want %s", objs[0], tt.first)
			}
			if crd := objs[1]; crd.obj.GetKind() != "CustomResourceDefinition" || crd.obj.GetAPIVersion() != tt.crd {
				t.Errorf("second object = %s %s, want the %s CRD", crd.obj.GetAPIVersion(), crd, tt.crd)
			}
			for _, w := range tt.want {
				if !names[w] {
					t.Errorf("%s lacks %s; has %v", tt.dir, w, names)
				}
			}
			for _, g := range tt.gone {
				if names[g] {
					t.Errorf("%s has %s, which its patches delete", tt.dir, g)
				}
			}
		})
	}
}

// A file's documents: empty ones skipped, Lists expanded, an object
// without kind named by file and document.
func TestLoadManifestsDecodesFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "objects.yaml")
	write(t, file, `# comments only
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: x}
  data: {n: "1"}
- apiVersion: v1
  kind: Secret
  metadata: {name: b}
---
{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "c"}, "automountServiceAccountToken": false}
`)
	write(t, filepath.Join(dir, "README.md"), "not a manifest")
	for _, path := range []string{file, dir} {
		objs, err := loadManifests(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range objs {
			got = append(got, m.String())
		}
		if strings.Join(got, ",") != "ConfigMap x/a,Secret b,ServiceAccount c" {
			t.Errorf("objects of %s = %v", path, got)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n")
	if _, err := loadManifests(context.Background(), bad); err == nil || !strings.Contains(err.Error(), bad+", document 2: the object has no kind") {
		t.Errorf("error = %v, want one naming %s, document 2", err, bad)
	}
	empty := filepath.Join(dir, "empty.yml")
	write(t, empty, "# nothing\n")
	if _, err := loadManifests(context.Background(), empty); err == nil || !strings.Contains(err.Error(), "holds no objects") {
		t.Errorf("error = %v, want one saying %s holds no objects", err, empty)
	}
}

var (
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetGVR     = schema.GroupVersionResource{Group: "test.etcdproof.io", Version: "v1", Resource: "widgets"}
	configMapGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaceGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// ref is an object the test looks for.
type ref struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// The reference profile's install and uninstall steps against a real
// kube-apiserver, with a kubectl that does not exist: the cluster-wide
// kustomization is applied (twice: idempotent), then deleted. envtest has
// no kube-controller-manager, so a deleted Namespace stays Terminating:
// the delete step first times out naming it, then passes once a stand-in
// for the namespace controller finalizes deleted namespaces. A file with a
// CRD and an object of its kind is applied server-side, then (as on a
// cluster before 1.22) by create and update.
func TestApplyAndDeleteStepsOnARealAPIServer(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	kubeconfig, _ := apiservertest.Start(t)
	p, err := profile.Load("../profiles/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profile.LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Intervals["install/uninstall"] = []string{"3m", "200ms"}
	ctx := t.Context()
	e, err := NewEnv(ctx, Options{Kubeconfig: kubeconfig, Kubectl: "/nonexistent/kubectl", ReportDir: t.TempDir()}, p, c)
	if err != nil {
		t.Fatal(err)
	}
	if !e.serverSideApply() {
		t.Fatalf("envtest's API server %s does not take server-side apply", e.ServerVersion)
	}

	installed := []ref{
		{namespaceGVR, "", "etcd-operator-system"},
		{crdGVR, "", "etcdclusters.etcd.database.coreos.com"},
		{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "etcd-operator-system", "etcd-operator"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", "etcd-operator"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "", "etcd-operator"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, "etcd-operator-system", "etcd-operator-leader-election"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, "etcd-operator-system", "etcd-operator-leader-election"},
		{deploymentGVR, "etcd-operator-system", "etcd-operator"},
	}
	for range 2 {
		if err := e.RunSteps(ctx, p.Install); err != nil {
			t.Fatal(err)
		}
		for _, r := range installed {
			if err := get(ctx, e, r); err != nil {
				t.Errorf("after install: %v", err)
			}
		}
	}
	deploy, err := e.Dynamic.Resource(deploymentGVR).Namespace("etcd-operator-system").Get(ctx, "etcd-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !managedBy(deploy.GetManagedFields(), metav1.ManagedFieldsOperationApply) {
		t.Errorf("the Deployment's fields are not applied by %s: %v", fieldManager, deploy.GetManagedFields())
	}

	c.Intervals["install/uninstall"] = []string{"15s", "200ms"}
	err = e.RunSteps(ctx, p.Uninstall)
	// Long enough for a busy machine's API server to answer and finalize the
	// CRDs (which may still be named too); the namespace never goes here.
	if err == nil || !strings.Contains(err.Error(), "not deleted within 15s: ") ||
		!strings.Contains(err.Error(), "Namespace etcd-operator-system (deleting, waiting for finalizers kubernetes)") {
		t.Errorf("uninstall without a namespace controller: error = %v, want the Terminating namespace named", err)
	}
	for _, r := range installed[1:] {
		if err := get(ctx, e, r); !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall: %s %s/%s: %v, want it gone", r.gvr.Resource, r.namespace, r.name, err)
		}
	}
	// kube-apiserver finalizes a deleted CRD from a rate-limited queue: on a
	// busy machine one CRD waited more than 3 min for its cleanup finalizer.
	c.Intervals["install/uninstall"] = []string{"5m", "200ms"}
	finalizeNamespaces(t, e)
	if err := e.RunSteps(ctx, p.Uninstall); err != nil {
		t.Fatal(err)
	}
	for _, r := range installed {
		if err := get(ctx, e, r); !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall: %s %s/%s: %v, want it gone", r.gvr.Resource, r.namespace, r.name, err)
		}
	}
	// Uninstalling what is not there (its CRD gone too) does nothing.
	if err := e.RunSteps(ctx, p.Uninstall); err != nil {
		t.Errorf("second uninstall: %v", err)
	}

	file := filepath.Join(t.TempDir(), "widgets.yaml")
	apply, del := []profile.Step{{Apply: file}}, []profile.Step{{Delete: file}}
	fileObjects := []ref{{crdGVR, "", "widgets.test.etcdproof.io"}, {widgetGVR, "default", "w"}, {configMapGVR, "default", "settings"}}
	sinceServerSideApply := e.ServerVersion
	for _, era := range []struct {
		version string
		op      metav1.ManagedFieldsOperationType
	}{{e.ServerVersion, metav1.ManagedFieldsOperationApply}, {"v1.21.14", metav1.ManagedFieldsOperationUpdate}} {
		e.ServerVersion = era.version
		for _, value := range []string{"one", "two"} {
			write(t, file, widgetsYAML(value))
			if err := e.RunSteps(ctx, apply); err != nil {
				t.Fatalf("%s: apply with %s: %v", era.version, value, err)
			}
			cm, err := e.Dynamic.Resource(configMapGVR).Namespace("default").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := cm.Object["data"].(map[string]any)["value"]; got != value {
				t.Errorf("%s: ConfigMap value = %v, want %s", era.version, got, value)
			}
			if !managedBy(cm.GetManagedFields(), era.op) {
				t.Errorf("%s: no %s by %s in %v", era.version, era.op, fieldManager, cm.GetManagedFields())
			}
		}
		for _, r := range fileObjects {
			if err := get(ctx, e, r); err != nil {
				t.Errorf("%s: after apply: %v", era.version, err)
			}
		}
		if err := e.RunSteps(ctx, del); err != nil {
			t.Fatalf("%s: %v", era.version, err)
		}
		for _, r := range fileObjects {
			if err := get(ctx, e, r); !apierrors.IsNotFound(err) {
				t.Errorf("%s: after delete: %s %s/%s: %v, want it gone", era.version, r.gvr.Resource, r.namespace, r.name, err)
			}
		}
	}

	e.ServerVersion = sinceServerSideApply

	for _, tt := range []struct {
		name    string
		steps   []profile.Step
		content string
		want    []string
	}{
		{name: "missing apply", steps: []profile.Step{{Apply: "/nonexistent/install"}}, want: []string{"step 1 (apply /nonexistent/install): /nonexistent/install does not exist"}},
		{name: "missing delete", steps: []profile.Step{{Delete: "/nonexistent/install"}}, want: []string{"step 1 (delete /nonexistent/install): /nonexistent/install does not exist"}},
		{name: "refused", steps: []profile.Step{{Apply: file}}, content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n",
			want: []string{"step 1 (apply " + file + "): ConfigMap default/Not_A_Name: server-side apply: ", "metadata.name: Invalid value"}},
		{name: "unknown kind", steps: []profile.Step{{Apply: file}}, content: "apiVersion: test.etcdproof.io/v1\nkind: Gadget\nmetadata:\n  name: g\n",
			want: []string{"Gadget g: the API server does not serve kind test.etcdproof.io/v1, Kind=Gadget"}},
	} {
		if tt.content != "" {
			write(t, file, tt.content)
		}
		err := e.RunSteps(ctx, tt.steps)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error = %v, want one saying %q", tt.name, err, w)
			}
		}
	}
}

// widgetsYAML is a CRD, an object of its kind (applied in the same step)
// and a ConfigMap holding value; the latter two have no namespace.
func widgetsYAML(value string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.etcdproof.io
spec:
  group: test.etcdproof.io
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: test.etcdproof.io/v1
kind: Widget
metadata:
  name: w
spec:
  size: 3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  value: ` + value + "\n"
}

func get(ctx context.Context, e *Env, r ref) error {
	_, err := e.Dynamic.Resource(r.gvr).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	return err
}

func managedBy(fields []metav1.ManagedFieldsEntry, op metav1.ManagedFieldsOperationType) bool {
	for _, f := range fields {
		if f.Manager == fieldManager && f.Operation == op {
			return true
		}
	}
	return false
}

// finalizeNamespaces stands in, until the test ends, for the namespace
// controller envtest lacks: a deleted namespace's finalizers are removed
// (its objects are the test's to delete first), so it goes away.
func finalizeNamespaces(t *testing.T, e *Env) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		for ctx.Err() == nil {
			list, err := e.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, ns := range list.Items {
					if ns.DeletionTimestamp != nil && len(ns.Spec.Finalizers) > 0 {
						ns.Spec.Finalizers = nil
						_, _ = e.Kube.CoreV1().Namespaces().Finalize(ctx, &ns, metav1.UpdateOptions{})
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The reference's operator upgrade is its install with the next build's
// image, current and legacy alike.
func TestUpgradeNextOverlaysMoveOnlyTheImage(t *testing.T) {
	for _, dir := range []string{"../../manifests/upgrade-next", "../../manifests/legacy/upgrade-next"} {
		t.Run(dir, func(t *testing.T) {
			objs, err := loadManifests(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			images := 0
			for _, m := range objs {
				if m.obj.GetKind() != "Deployment" {
					continue
				}
				containers, _, _ := unstructured.NestedSlice(m.obj.Object, "spec", "template", "spec", "containers")
				for _, c := range containers {
					if image := c.(map[string]any)["image"]; image != "etcdproof/etcd-operator:next" {
						t.Errorf("%s: image %v, want etcdproof/etcd-operator:next", m, image)
					}
					images++
				}
			}
			if images != 1 {
				t.Errorf("%d operator containers, want 1", images)
			}
		})
	}
}
