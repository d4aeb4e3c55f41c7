package rbac

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// wildcardInstall is a grant like coreos etcd-operator v0.9.4's book Role
// (wildcard verbs, deployments, secrets), which also allows what
// testdata/audit.log used.
var wildcardInstall = []Grant{
	{Namespace: "ops", Source: "RoleBinding ops/etcd-operator -> Role etcd-operator", Rule: rbacv1.PolicyRule{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters", "etcdclusters/status"}, Verbs: []string{"*"}}},
	{Namespace: "ops", Source: "RoleBinding ops/etcd-operator -> Role etcd-operator", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "services"}, Verbs: []string{"*"}}},
	{Namespace: "ops", Source: "RoleBinding ops/etcd-operator -> Role etcd-operator", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
}

// ownRole covers exactly the uses of testdata/audit.log.
var ownRole = []Grant{
	{Namespace: "ops", Source: "declared Role op (role.yaml)", Rule: rbacv1.PolicyRule{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters", "etcdclusters/status"}, Verbs: []string{"list", "watch", "update"}}},
	{Namespace: "ops", Source: "declared Role op (role.yaml)", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
}

func kindsOf(fs []Finding) string {
	var kinds []string
	for _, f := range fs {
		kinds = append(kinds, f.Kind)
	}
	return strings.Join(kinds, ",")
}

func TestCompareDeclared(t *testing.T) {
	narrowInstall := []Grant{{Namespace: "ops", Source: "RoleBinding ops/x -> Role x", Rule: rbacv1.PolicyRule{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters", "etcdclusters/status"}, Verbs: []string{"list", "watch", "update"}}}}
	cases := []struct {
		name      string
		installed []Grant
		declared  []Grant
		kinds     []string
		// messages are substrings of the findings, in order.
		messages []string
		excess   []string
	}{
		{
			name:      "a declared role covering every use passes under a wildcard install; the excess is noted",
			installed: wildcardInstall,
			declared:  ownRole,
			excess: []string{
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [*] on [etcdclusters,etcdclusters/status] in groups [etcd.database.coreos.com] (granted by the install, not used)",
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [*] on [pods,services] in groups [core] (granted by the install, not used)",
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [get] on [secrets] in groups [core] (granted by the install, not used)",
			},
		},
		{
			name:      "a use the declared role does not allow fails",
			installed: wildcardInstall,
			declared:  ownRole[:1],
			kinds:     []string{FindingNotDeclared},
			messages:  []string{"used but not declared: ns/ops create pods.core (no declared rule allows it)"},
			excess: []string{
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [*] on [etcdclusters,etcdclusters/status] in groups [etcd.database.coreos.com] (granted by the install, not used)",
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [*] on [pods,services] in groups [core] (granted by the install and used: see the findings)",
				"installed grant exceeds the declared rules: RoleBinding ops/etcd-operator -> Role etcd-operator grants [get] on [secrets] in groups [core] (granted by the install, not used)",
			},
		},
		{
			name:      "a use the install denied fails even when declared",
			installed: narrowInstall,
			declared:  ownRole,
			kinds:     []string{FindingNotGranted},
			messages:  []string{"used but not granted: ns/ops create pods.core"},
		},
		{
			name:      "a declared wildcard fails, attributed to the declared file",
			installed: wildcardInstall,
			declared:  append(ownRole[:1:1], Grant{Namespace: "ops", Source: "declared Role op (role.yaml)", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}}}),
			kinds:     []string{FindingWildcard, FindingDangerous},
			messages:  []string{"wildcard grant: declared Role op (role.yaml) grants [*] on [pods]", "dangerous grant: declared Role op (role.yaml) allows"},
		},
		{
			name:      "a declared dangerous grant fails",
			installed: wildcardInstall,
			declared:  append(ownRole[:2:2], Grant{Namespace: "ops", Source: "declared Role op (role.yaml)", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}),
			kinds:     []string{FindingDangerous},
		},
		{
			name:      "a declared ClusterRole for namespaced uses fails on its scope",
			installed: wildcardInstall,
			declared:  []Grant{ownRole[0], {Source: "declared ClusterRole op (cr.yaml)", Rule: ownRole[1].Rule}},
			kinds:     []string{FindingClusterScope},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := CompareDeclared(uses(t), tc.installed, tc.declared, Scope{OperatorNamespace: "ops"})
			if got := kindsOf(d.Findings); got != strings.Join(tc.kinds, ",") {
				t.Errorf("findings = %+v, want kinds %v", d.Findings, tc.kinds)
			}
			for i, m := range tc.messages {
				if i >= len(d.Findings) || !strings.HasPrefix(d.Findings[i].Message, m) {
					t.Errorf("finding %d = %+v, want one starting %q", i, d.Findings, m)
				}
			}
			if tc.excess != nil && strings.Join(d.Excess, "\n") != strings.Join(tc.excess, "\n") {
				t.Errorf("excess:\n%s\nwant:\n%s", strings.Join(d.Excess, "\n"), strings.Join(tc.excess, "\n"))
			}
		})
	}
}

// The installed grant's excess counts verbs literally and keeps scopes
// apart: a declared Role does not cover a cluster-wide install.
func TestExcessIsWhatTheDeclaredRulesDoNotCover(t *testing.T) {
	declared := []Grant{{Namespace: "ops", Source: "declared", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "services"}, Verbs: []string{"get", "create"}}}}
	cases := []struct {
		name      string
		installed Grant
		want      string
	}{
		{"covered", Grant{Namespace: "ops", Source: "i", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}, ""},
		{"extra verbs, merged by resource", Grant{Namespace: "ops", Source: "i", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "services", "secrets"}, Verbs: []string{"get", "delete"}}}, "[delete] on [pods,services] in groups [core]; [get,delete] on [secrets] in groups [core]"},
		{"cluster-wide install of declared namespaced rules", Grant{Source: "i", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}, "[get] on [pods] in groups [core]"},
		{"another namespace", Grant{Namespace: "other", Source: "i", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}, "[get] on [pods] in groups [core]"},
		{"named objects only are covered", Grant{Namespace: "ops", Source: "i", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}, Verbs: []string{"get"}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, r := range beyondDeclared(tc.installed, declared) {
				parts = append(parts, describeRule(r))
			}
			if got := strings.Join(parts, "; "); got != tc.want {
				t.Errorf("excess = %q, want %q", got, tc.want)
			}
		})
	}
}

// Coverage is RBAC's (validation.Covers), also where the rules before it
// were hand-written: subresource and URL wildcards, resource names spread
// over several declared rules.
func TestExcessFollowsRBACCoverage(t *testing.T) {
	declared := []Grant{
		{Namespace: "ops", Source: "d1", Rule: rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"*/scale"}, Verbs: []string{"get"}}},
		{Namespace: "ops", Source: "d2", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}, Verbs: []string{"get"}}},
		{Namespace: "ops", Source: "d3", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"b"}, Verbs: []string{"get"}}},
		{Source: "d4", Rule: rbacv1.PolicyRule{NonResourceURLs: []string{"/healthz/*", "/metrics"}, Verbs: []string{"get"}}},
	}
	rule := func(group, resource string, verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
	}
	cases := []struct {
		name string
		rule rbacv1.PolicyRule
		want string
	}{
		{"any resource's scale subresource", rule("apps", "deployments/scale", "get"), ""},
		{"not the resource itself", rule("apps", "deployments", "get"), "[get] on [deployments] in groups [apps]"},
		{"a wildcard is covered by a wildcard only", rule("apps", "*", "get"), "[get] on [*] in groups [apps]"},
		{"names covered one by one", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "b"}, Verbs: []string{"get"}}, ""},
		{"a name no rule covers", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "c"}, Verbs: []string{"get"}}, "[get] on [configmaps] in groups [core]"},
		{"all names of named rules", rule("", "configmaps", "get"), "[get] on [configmaps] in groups [core]"},
		{"URLs under a path", rbacv1.PolicyRule{NonResourceURLs: []string{"/healthz/etcd", "/metrics"}, Verbs: []string{"get"}}, ""},
		{"URL outside", rbacv1.PolicyRule{NonResourceURLs: []string{"/healthz", "/version"}, Verbs: []string{"get", "post"}}, "[get,post] on [] in groups []; [get,post] on [] in groups []"},
		{"URL verbs", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get", "post"}}, "[post] on [] in groups []"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, r := range beyondDeclared(Grant{Namespace: "ops", Source: "i", Rule: tc.rule}, declared) {
				parts = append(parts, describeRule(r))
			}
			if got := strings.Join(parts, "; "); got != tc.want {
				t.Errorf("excess = %q, want %q", got, tc.want)
			}
		})
	}
}

// The declared rules shipped for reference-as-coreos cover every request of
// a real run of that profile (v1.34.4, December 2026: the uses its rbac.json
// recorded), and coreos' Role, which that install binds, granted them all.
func TestShippedDeclaredRoleCoversTheReferenceUnderCoreosRole(t *testing.T) {
	const ns = "etcd-operator"
	declared, err := ReadDeclared("../profiles/reference-as-coreos/declared-role", ns)
	if err != nil {
		t.Fatal(err)
	}
	installed, err := ReadDeclared("../profiles/coreos-v0.9.4/base/rbac.yaml", ns)
	if err != nil {
		t.Fatal(err)
	}
	u, err := DeriveUses("testdata/reference-as-coreos.audit.log", Username(ns, "etcd-operator"), time.Time{})
	if err != nil || len(u) != 9 {
		t.Fatalf("uses = %v, %v; want the run's 9", u, err)
	}
	d := CompareDeclared(u, installed, declared, Scope{OperatorNamespace: ns})
	if len(d.Findings) != 0 {
		t.Errorf("findings: %+v", d.Findings)
	}
	if len(d.Excess) == 0 || !strings.Contains(strings.Join(d.Excess, "\n"), "grants [*] on [etcdclusters,etcdbackups,etcdrestores]") {
		t.Errorf("excess = %v, want coreos' wildcards listed", d.Excess)
	}
	// Judged as the installed grant, as for coreos itself, the same run fails.
	if d := Compare(u, installed, Scope{OperatorNamespace: ns}); len(d.Findings) == 0 {
		t.Error("coreos' Role passes when judged as installed")
	}
	for _, g := range declared {
		if strings.Contains(g.Source, "ClusterRole") != (g.Namespace == "") || (g.Namespace != "" && g.Namespace != ns) {
			t.Errorf("%s: namespace %q, want Roles in %s and ClusterRoles cluster-wide", g.Source, g.Namespace, ns)
		}
	}
	if !strings.Contains(declared[0].Source, filepath.Join("manifests", "rbac", "role.yaml")) {
		t.Errorf("first declared source = %q, want the generated role.yaml", declared[0].Source)
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const roleYAML = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: elsewhere}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
`

func TestReadDeclared(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"role.yaml":                roleYAML,
		"sa.yaml":                  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n",
		"list.yaml":                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata: {name: c}\n  rules: [{apiGroups: [\"\"], resources: [nodes], verbs: [list]}]\n",
		"k/kustomization.yaml":     "namespace: x\nresources: [../role.yaml, ../sa.yaml, ../list.yaml, sub]\n",
		"k/sub/kustomization.yaml": "resources: [../../role.yaml]\n",
	})
	grants, err := ReadDeclared(filepath.Join(dir, "k"), "ops")
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 2 || grants[0].Namespace != "ops" || grants[1].Namespace != "" || !strings.HasPrefix(grants[1].Source, "declared ClusterRole c (") {
		t.Errorf("grants = %+v, want the Role's rule in ops (read once) and the ClusterRole's cluster-wide", grants)
	}
}

func TestReadDeclaredRefusesWhatItCannotJudge(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"role.yaml":                  roleYAML,
		"sa.yaml":                    "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n",
		"patched/kustomization.yaml": "resources: [../role.yaml]\npatches: [{path: p.yaml}]\n",
		"remote/kustomization.yaml":  "resources: [https://example.com/role.yaml]\n",
		"plain/role.yaml":            roleYAML,
		"agg.yaml":                   "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}\naggregationRule: {clusterRoleSelectors: [{matchLabels: {x: y}}]}\n",
	})
	for _, tc := range []struct{ path, want string }{
		{"missing.yaml", "missing.yaml: no such file"},
		{"sa.yaml", "sa.yaml holds no Role or ClusterRole rules"},
		{"patched", `"patches" could change or remove Roles`},
		{"remote", "only local files"},
		{"plain", "plain is a directory without a kustomization.yaml"},
		{"agg.yaml", "ClusterRole a aggregates other ClusterRoles"},
	} {
		_, err := ReadDeclared(filepath.Join(dir, tc.path), "ops")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want one containing %q", tc.path, err, tc.want)
		}
	}
}
