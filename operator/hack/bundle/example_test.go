package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The example operator (examples/memcached-operator) is another package the
// generator writes, from its CSV base, through the flags: keep this as the
// Makefile's bundle target runs it.
const (
	memcachedDir     = "examples/memcached-operator"
	memcachedPackage = "etcdproof-memcached-operator"
)

var memcachedReleases = []struct{ version, image, replaces string }{
	{"0.1.0", "etcdproof/memcached-operator:v1", ""},
	{"0.2.0", "etcdproof/memcached-operator:v2", "0.1.0"},
}

func memcachedOptions(out string) options {
	dir := filepath.Join(repoRoot, memcachedDir)
	return options{
		packageName: memcachedPackage,
		csvBase:     filepath.Join(dir, "config/manifests/bases/memcached-operator.clusterserviceversion.yaml"),
		install:     filepath.Join(dir, "config/default"),
		samples:     filepath.Join(dir, "config/samples"),
		out:         out,
	}
}

// generateMemcached writes the example's bundles to <dir>/bundle/<version>
// and their catalog to <dir>/catalog.
func generateMemcached(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range memcachedReleases {
		o := memcachedOptions(filepath.Join(dir, "bundle"))
		o.version, o.image, o.replaces = r.version, r.image, r.replaces
		if err := run(o); err != nil {
			t.Fatalf("generating %s: %v", r.version, err)
		}
	}
	o := memcachedOptions(filepath.Join(dir, "bundle"))
	o.catalog = filepath.Join(dir, "catalog")
	if err := run(o); err != nil {
		t.Fatalf("generating the catalog: %v", err)
	}
	return dir
}

// The example's bundles are fresh and valid, each release runs its image,
// 0.2.0 replaces 0.1.0, and the CSV grants the example's Roles, names its
// memcached image, and leaves out what only the reference operator takes.
func TestMemcachedExampleBundles(t *testing.T) {
	dir := generateMemcached(t)
	sameFiles(t, filepath.Join(dir, "bundle"), filepath.Join(memcachedDir, "bundle"))
	// Beside the reference operator's package, so one catalog server (manifests/olm) serves both.
	sameFiles(t, filepath.Join(dir, "catalog", memcachedPackage), filepath.Join("manifests/olm/catalog", memcachedPackage))
	for i, r := range memcachedReleases {
		b := loadBundle(t, filepath.Join(dir, "bundle", r.version))
		expectValid(t, r.version, b)
		csv := b.CSV
		wantReplaces := ""
		if i > 0 {
			wantReplaces = "memcached-operator.v" + memcachedReleases[i-1].version
		}
		if csv.Name != "memcached-operator.v"+r.version || csv.Spec.Replaces != wantReplaces || b.Package != memcachedPackage {
			t.Errorf("%s: CSV %s replacing %q in package %s", r.version, csv.Name, csv.Spec.Replaces, b.Package)
		}
		strategy := csv.Spec.InstallStrategy.StrategySpec
		c := strategy.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
		if c.Image != r.image || !slices.Equal(c.Args, []string{"--leader-elect"}) {
			t.Errorf("%s: the operator runs %s %v, want %s --leader-elect alone", r.version, c.Image, c.Args, r.image)
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
			return e.Name == "WATCH_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['olm.targetNamespaces']"
		}) {
			t.Errorf("%s: WATCH_NAMESPACE is not OLM's target namespaces: %+v", r.version, c.Env)
		}
		images := map[string]string{}
		for _, ri := range csv.Spec.RelatedImages {
			images[ri.Name] = ri.Image
		}
		if images["memcached-operator"] != r.image || !strings.HasPrefix(images["memcached"], "etcdproof/memcached:") {
			t.Errorf("%s: relatedImages %v, want the operator's and memcached's", r.version, csv.Spec.RelatedImages)
		}
		checkGrants(t, r.version, strategy, memcachedDir+"/config/rbac/role.yaml", memcachedDir+"/config/rbac/leader_election_role.yaml")
	}
}

// checkGrants: the CSV grants the operator every rule of the Roles in
// files, in its namespace, and nothing cluster-wide.
func checkGrants(t *testing.T, release string, strategy v1alpha1.StrategyDetailsDeployment, files ...string) {
	t.Helper()
	var granted []rbacv1.PolicyRule
	for _, p := range strategy.Permissions {
		granted = append(granted, p.Rules...)
	}
	for _, file := range files {
		for _, rule := range readRole(t, file).Rules {
			if !slices.ContainsFunc(granted, func(g rbacv1.PolicyRule) bool { return reflect.DeepEqual(g, rule) }) {
				t.Errorf("%s: rule %v of %s is not in the CSV's permissions", release, rule, file)
			}
		}
	}
	if len(strategy.ClusterPermissions) > 0 {
		t.Errorf("%s: clusterPermissions %v, want none", release, strategy.ClusterPermissions)
	}
}

// A CSV base that sets what the generator writes, or a half-given package,
// is refused rather than silently overwritten or mixed with the etcd one.
func TestPackageFlagsAreCheckedTogetherWithTheBase(t *testing.T) {
	base := memcachedOptions("").csvBase
	if _, err := loadPackage(memcachedPackage, ""); err == nil {
		t.Error("-package without -csv-base accepted")
	}
	if _, err := loadPackage("", base); err == nil {
		t.Error("-csv-base without -package accepted")
	}
	if _, err := loadPackage(memcachedPackage, base); err != nil {
		t.Errorf("the example's base: %v", err)
	}
	raw, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	for name, extra := range map[string]string{
		"replaces": "  replaces: memcached-operator.v0.0.1\n",
		"version":  "  version: 0.0.1\n",
	} {
		path := filepath.Join(t.TempDir(), "base.yaml")
		if err := os.WriteFile(path, append(raw, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadPackage(memcachedPackage, path); err == nil || !strings.Contains(err.Error(), "which the generator writes") {
			t.Errorf("a base setting spec.%s: %v, want refused for setting it", name, err)
		}
	}
}
