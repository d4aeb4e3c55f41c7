package rbac

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

func uses(t *testing.T) []Use {
	t.Helper()
	u, err := DeriveUses("testdata/audit.log", Username("ops", "etcd-operator"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDeriveUsesKeepsOnlyTheOperatorsDistinctRequests(t *testing.T) {
	got := uses(t)
	var s []string
	for _, u := range got {
		s = append(s, u.String())
	}
	want := []string{
		"ns/ops create pods.core",
		"ns/ops list etcdclusters.etcd.database.coreos.com",
		"ns/ops update etcdclusters/status.etcd.database.coreos.com",
		"ns/ops watch etcdclusters.etcd.database.coreos.com",
	}
	if strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("uses:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
}

func writeLog(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeriveUsesRejectsGarbage(t *testing.T) {
	if _, err := DeriveUses(writeLog(t, "not json\n"), "u", time.Time{}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("error = %v, want one naming line 1", err)
	}
}

func TestCompare(t *testing.T) {
	exact := []Grant{
		{Namespace: "ops", Source: "Role ops/op", Rule: rbacv1.PolicyRule{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters", "etcdclusters/status"}, Verbs: []string{"list", "watch", "update"}}},
		{Namespace: "ops", Source: "Role ops/op", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
	}
	cases := []struct {
		name      string
		grants    []Grant
		kinds     []string
		unused    int
		extraUses []Use
		scope     Scope
	}{
		{name: "exact grants pass", grants: exact},
		{name: "unused grant is reported, not failed", grants: append(exact[:2:2], Grant{Namespace: "ops", Source: "Role ops/extra", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}), unused: 1},
		{name: "wildcard fails", grants: append(exact[:2:2], Grant{Namespace: "ops", Source: "Role ops/wild", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}}}), kinds: []string{FindingWildcard, FindingDangerous}},
		{name: "secrets list is dangerous", grants: append(exact[:2:2], Grant{Namespace: "ops", Source: "Role ops/s", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}), kinds: []string{FindingDangerous}, unused: 1},
		{name: "cluster scope for namespaced use fails", grants: []Grant{exact[0], {Source: "ClusterRoleBinding op -> ClusterRole op", Rule: exact[1].Rule}}, kinds: []string{FindingClusterScope}},
		{name: "cluster scope for a many-namespace operator seen in one namespace is fine", grants: []Grant{exact[0], {Source: "ClusterRoleBinding op -> ClusterRole op", Rule: exact[1].Rule}}, scope: Scope{OperatorNamespace: "operator-system", ManyNamespaces: true}},
		{name: "cluster scope for a many-namespace operator used only in its own namespace fails", grants: []Grant{exact[0], {Source: "ClusterRoleBinding op -> ClusterRole op", Rule: exact[1].Rule}}, scope: Scope{OperatorNamespace: "ops", ManyNamespaces: true}, kinds: []string{FindingClusterScope}},
		{name: "cluster scope used in several namespaces is fine", grants: []Grant{exact[0], {Source: "ClusterRoleBinding op -> ClusterRole op", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "delete"}}}}, extraUses: []Use{{Namespace: "other", Resource: "pods", Verb: "delete"}}},
		{name: "used but not granted fails", grants: exact[:1], kinds: []string{FindingNotGranted}},
		{name: "impersonate is dangerous", grants: append(exact[:2:2], Grant{Source: "ClusterRole x", Rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}}}), kinds: []string{FindingDangerous}, unused: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(append(uses(t), tc.extraUses...), tc.grants, tc.scope)
			var kinds []string
			for _, f := range d.Findings {
				kinds = append(kinds, f.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("findings = %+v, want kinds %v", d.Findings, tc.kinds)
			}
			if len(d.Unused) != tc.unused {
				t.Errorf("unused = %v, want %d", d.Unused, tc.unused)
			}
		})
	}
}

func TestMinimalRolesCoverExactlyTheUses(t *testing.T) {
	u := uses(t)
	roles, cr := MinimalRoles("etcd-operator-minimal", u)
	if cr != nil || len(roles) != 1 || roles[0].Namespace != "ops" {
		t.Fatalf("roles = %+v, clusterRole = %+v", roles, cr)
	}
	var grants []Grant
	for _, r := range roles[0].Rules {
		grants = append(grants, Grant{Namespace: "ops", Source: "minimal", Rule: r})
	}
	d := Compare(u, grants, Scope{})
	if len(d.Findings) != 0 || len(d.Unused) != 0 {
		t.Errorf("the derived role is not minimal and sufficient: %+v", d)
	}
}

func TestDeriveUsesIgnoresEventsBeforeTheRun(t *testing.T) {
	log := `{"requestReceivedTimestamp":"2026-01-01T10:00:00.000000Z","verb":"list","user":{"username":"u"},"objectRef":{"resource":"secrets","namespace":"a"}}
{"requestReceivedTimestamp":"2026-01-01T12:00:00.000000Z","verb":"get","user":{"username":"u"},"objectRef":{"resource":"pods","namespace":"a"}}
`
	since, _ := time.Parse(time.RFC3339, "2026-01-01T11:00:00Z")
	got, err := DeriveUses(writeLog(t, log), "u", since)
	if err != nil || len(got) != 1 || got[0].Resource != "pods" {
		t.Errorf("uses = %v, err = %v; want only the pods get after the run started", got, err)
	}
}

// Requests rotated out of audit.log during the run still count.
func TestDeriveUsesReadsRotatedBackups(t *testing.T) {
	live := writeLog(t, `{"requestReceivedTimestamp":"2026-01-01T12:00:00.000000Z","verb":"get","user":{"username":"u"},"objectRef":{"resource":"pods","namespace":"a"}}
`)
	backup := filepath.Join(filepath.Dir(live), "audit-2026-01-01T11-30-00.000.log")
	if err := os.WriteFile(backup, []byte(`{"requestReceivedTimestamp":"2026-01-01T11:10:00.000000Z","verb":"list","user":{"username":"u"},"objectRef":{"resource":"leases","namespace":"a","apiGroup":"coordination.k8s.io"}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	since, _ := time.Parse(time.RFC3339, "2026-01-01T11:00:00Z")
	got, err := DeriveUses(live, "u", since)
	if err != nil || len(got) != 2 {
		t.Errorf("uses = %v, err = %v; want the backup's leases list and the live file's pods get", got, err)
	}
}
