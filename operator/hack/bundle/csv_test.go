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
	"sigs.k8s.io/yaml"
)

func readRole(t *testing.T, file string) rbacv1.Role {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	return role
}

// The operator gets under OLM what the plain install grants it: every rule
// of the generated Role and of leader election, in its namespace (OLM copies
// them to the target namespace), and nothing cluster-wide.
func TestCSVGrantsTheInstallsRoles(t *testing.T) {
	dir := generateAll(t)
	for _, r := range releases {
		csv := loadBundle(t, filepath.Join(dir, "bundle", r.version)).CSV
		strategy := csv.Spec.InstallStrategy.StrategySpec
		sa := strategy.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName
		var granted []rbacv1.PolicyRule
		for _, p := range strategy.Permissions {
			if p.ServiceAccountName == sa {
				granted = append(granted, p.Rules...)
			}
		}
		for _, file := range []string{"manifests/rbac/role.yaml", "manifests/rbac/leader_election_role.yaml"} {
			for _, rule := range readRole(t, file).Rules {
				if !slices.ContainsFunc(granted, func(g rbacv1.PolicyRule) bool { return reflect.DeepEqual(g, rule) }) {
					t.Errorf("%s: rule %v of %s is not in the CSV's permissions of %s", r.version, rule, file, sa)
				}
			}
		}
		if len(strategy.ClusterPermissions) > 0 {
			t.Errorf("%s: clusterPermissions %v: the operator watches one namespace and needs none", r.version, strategy.ClusterPermissions)
		}
	}
}

// Each release runs the image asked for, and the releases form one upgrade
// chain OLM can follow: 0.1.0 → 0.2.0.
func TestReleasesRunTheirImageAndReplaceThePreviousOne(t *testing.T) {
	dir := generateAll(t)
	for i, r := range releases {
		csv := loadBundle(t, filepath.Join(dir, "bundle", r.version)).CSV
		if want := "etcd-operator.v" + r.version; csv.Name != want || csv.Spec.Version.String() != r.version {
			t.Errorf("CSV %s version %s, want %s version %s", csv.Name, csv.Spec.Version, want, r.version)
		}
		d := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
		if len(d) != 1 {
			t.Fatalf("%s: %d deployments, want 1", r.version, len(d))
		}
		for _, c := range d[0].Spec.Template.Spec.Containers {
			if c.Image != r.image {
				t.Errorf("%s: container %s runs %s, want %s", r.version, c.Name, c.Image, r.image)
			}
		}
		if want := []v1alpha1.RelatedImage{{Name: etcdOperator.container(), Image: r.image}}; !reflect.DeepEqual(csv.Spec.RelatedImages, want) {
			t.Errorf("%s: relatedImages %v, want %v", r.version, csv.Spec.RelatedImages, want)
		}
		want := ""
		if i > 0 {
			want = "etcd-operator.v" + releases[i-1].version
		}
		if csv.Spec.Replaces != want {
			t.Errorf("%s: replaces %q, want %q", r.version, csv.Spec.Replaces, want)
		}
	}
}

// The Deployment hands the namespaces OLM targets to $WATCH_NAMESPACE, keeps
// POD_NAMESPACE (the Lease's namespace) its own, and leaves the CRDs to OLM.
func TestDeploymentWatchesTheOperatorGroupsNamespace(t *testing.T) {
	dir := generateAll(t)
	csv := loadBundle(t, filepath.Join(dir, "bundle", releases[0].version)).CSV
	c := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["WATCH_NAMESPACE"] != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("WATCH_NAMESPACE from %q, want OLM's target namespaces", env["WATCH_NAMESPACE"])
	}
	if env["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("POD_NAMESPACE from %q, want the pod's namespace", env["POD_NAMESPACE"])
	}
	for _, arg := range []string{"--create-crd=false", "--leader-elect"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %v lack %s", c.Args, arg)
		}
	}
	if slices.ContainsFunc(c.Args, func(a string) bool { return a == "--cluster-wide" || strings.HasPrefix(a, "--namespace") }) {
		t.Errorf("args %v choose the watched namespaces, which $WATCH_NAMESPACE must", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAME" }) {
		t.Error("POD_NAME is gone: the operator reads its own image from its pod (--seed-image)")
	}
}

// OLM admits an OperatorGroup only in the modes the CSV declares: those where
// the operator receives one namespace, or "" for all of them.
func TestInstallModesAreWhatTheOperatorCanWatch(t *testing.T) {
	set, err := v1alpha1.NewInstallModeSet(installModes)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		targets []string
		ok      bool
	}{
		{[]string{"ops"}, true},            // OwnNamespace
		{[]string{"team-a"}, true},         // SingleNamespace
		{[]string{""}, true},               // AllNamespaces: every namespace
		{[]string{"a", "b"}, false},        // MultiNamespace: "a,b" is no namespace
		{[]string{"ops", "team-a"}, false}, // MultiNamespace with its own
	}
	for _, c := range cases {
		if err := set.Supports("ops", c.targets); (err == nil) != c.ok {
			t.Errorf("targets %q: supported=%v, want %v (%v)", c.targets, err == nil, c.ok, err)
		}
	}
}

func TestBundleSpecFlags(t *testing.T) {
	for _, c := range []struct{ version, image, replaces string }{
		{"", "img", ""},
		{"0.1.0", "", ""},
		{"v0.1.0", "img", ""},
		{"0.2.0", "img", "0.2.0"},
		{"0.2.0", "img", "0.3.0"},
		{"0.2.0", "img", "etcd-operator.v0.1.0"},
	} {
		if _, err := parseBundleSpec(etcdOperator, c.version, c.image, c.replaces); err == nil {
			t.Errorf("parseBundleSpec(%q, %q, %q) accepted", c.version, c.image, c.replaces)
		}
	}
	b, err := parseBundleSpec(etcdOperator, "0.2.0", "img", "0.1.0")
	if err != nil || b.replaces != "etcd-operator.v0.1.0" {
		t.Errorf("parseBundleSpec: %+v, %v", b, err)
	}
}

// A kind the generator does not place is refused, not silently dropped.
func TestUnknownKindInTheInstallIsRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", "resources:\n- cm.yaml\n")
	write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
	if _, err := loadInstall(dir); err == nil {
		t.Error("an install with a ConfigMap was turned into a bundle without it")
	}
}
