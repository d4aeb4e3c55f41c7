package framework

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// Against a real kube-apiserver: install a profile (its apply steps), create a
// cluster CR from its template, patch size and version at the profile's
// field paths, read the bindings, and see the install in the inventory.
func TestProfileDrivenClusterOpsOnARealAPIServer(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	p := loadProfile(t, "../profiles/coreos-v0.9.4.yaml")
	ctx := context.Background()
	e := envOnAPIServer(t, p)
	before, err := inventory.Take(ctx, e.Disc, e.Dynamic)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunSteps(ctx, p.Install); err != nil {
		t.Fatal(err)
	}

	grants, err := e.Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := rbac.Compare([]rbac.Use{{Namespace: "etcd-operator", Resource: "pods", Verb: "create"}}, grants, rbac.Scope{OperatorNamespace: "etcd-operator"})
	var kinds []string
	for _, f := range d.Findings {
		kinds = append(kinds, f.Kind)
	}
	// The book's Role uses "*" verbs: the suite must call that out.
	if !strings.Contains(strings.Join(kinds, ","), rbac.FindingWildcard) {
		t.Errorf("findings on the book's Role = %v, want a wildcard finding", d.Findings)
	}

	ec, err := e.CreateCluster(ctx, ClusterSpec{Namespace: p.ClusterNamespace("unused"), Name: "demo", Size: 3, Version: "3.5.21"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Kube.CoreV1().Services("etcd-operator").Get(ctx, "demo", metav1.GetOptions{}); err != nil {
		t.Errorf("the profile's extra peer Service was not created: %v", err)
	}
	if err := ec.SetSize(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := ec.SetVersion(ctx, "3.6.5"); err != nil {
		t.Fatal(err)
	}
	obj, err := ec.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := obj.Object["spec"].(map[string]any)
	if spec["size"] != int64(4) || spec["version"] != "3.6.5" || spec["repository"] != "quay.io/coreos/etcd" {
		t.Errorf("spec = %v", spec)
	}
	// No status yet: every field the profile names is reported unfilled,
	// which the ground truth takes as a disagreement with etcd.
	if claims, err := ec.Claims(ctx); err != nil || len(claims.Unfilled) != 3 {
		t.Errorf("claims of a CR with no status = %+v, %v; want phase, readyMembers and currentVersion unfilled", claims, err)
	}
	obj.Object["status"] = map[string]any{"phase": "Running", "currentVersion": "3.6.5", "members": map[string]any{"ready": []any{"a", "b", "c"}}}
	if _, err := e.crResource().Namespace(ec.Namespace).Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	claims, err := ec.Claims(ctx)
	if err != nil || claims.Phase != "Running" || claims.ReadyMembers != 3 || claims.CurrentVersion != "3.6.5" || len(claims.Unfilled) > 0 {
		t.Errorf("claims = %+v, %v", claims, err)
	}

	after, err := inventory.Take(ctx, e.Disc, e.Dynamic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, o := range inventory.Leftovers(before, after, inventory.DefaultExclusions) {
		left[o.String()] = true
	}
	for _, want := range []string{
		"customresourcedefinitions.apiextensions.k8s.io etcdclusters.etcd.database.coreos.com",
		"deployments.apps etcd-operator/etcd-operator",
		"etcdclusters.etcd.database.coreos.com etcd-operator/demo",
		"roles.rbac.authorization.k8s.io etcd-operator/etcd-operator",
		"namespaces etcd-operator",
	} {
		if !left[want] {
			t.Errorf("inventory diff lacks %q; got %v", want, left)
		}
	}
}

// loadProfile loads the profile at path or fails the test.
func loadProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// envOnAPIServer starts a real kube-apiserver and returns an Env for
// profile p on it, with the suite's own config.
func envOnAPIServer(t *testing.T, p *profile.Profile) *Env {
	t.Helper()
	kubeconfig, assets := apiservertest.Start(t)
	c, err := profile.LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEnv(context.Background(), Options{Kubeconfig: kubeconfig, Kubectl: filepath.Join(assets, "kubectl"), ReportDir: t.TempDir()}, p, c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
