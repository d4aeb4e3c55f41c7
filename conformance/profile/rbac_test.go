package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minimal is a valid profile; rbac is appended by the tests.
const minimal = `
name: p
operator: {namespace: ops, serviceAccount: op, deployment: op}
install: [{apply: install.yaml}]
uninstall: [{delete: install.yaml}]
cluster:
  template: "name: {{ .Name }}"
  resource: etcdclusters.etcd.database.coreos.com
  apiVersion: etcd.database.coreos.com/v1beta2
  kind: EtcdCluster
  sizePath: spec.size
  versionPath: spec.version
  memberSelector: "etcd_cluster={{ .Name }}"
  clientService: "{{ .Name }}-client"
  clientPort: 2379
etcd: {repository: r, initial: 3.6.16}
`

// profileWith writes the minimal profile with an rbac section and extra
// files into one directory, and returns the profile's path.
func profileWith(t *testing.T, rbac string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(p, []byte(minimal+rbac), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDeclaredRoleIsReadAtLoad(t *testing.T) {
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: op}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [get]}]\n"
	p, err := Load(profileWith(t, "rbac: {declaredRole: role.yaml}\n", map[string]string{"role.yaml": role}))
	if err != nil {
		t.Fatal(err)
	}
	if p.RBAC.DeclaredRole != "role.yaml" {
		t.Errorf("declaredRole = %q", p.RBAC.DeclaredRole)
	}
	for _, tc := range []struct {
		name, rbac string
		files      map[string]string
		want       []string
	}{
		{"missing file", "rbac: {declaredRole: roles/own-role.yaml}\n", nil, []string{"rbac.declaredRole:", "roles/own-role.yaml", "no such file"}},
		{"no rules", "rbac: {declaredRole: sa.yaml}\n", map[string]string{"sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: op}\n"}, []string{"rbac.declaredRole:", "sa.yaml holds no Role or ClusterRole rules"}},
		{"url", "rbac: {declaredRole: \"https://example.com/role.yaml\"}\n", nil, []string{"rbac.declaredRole:", "must be a local file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(profileWith(t, tc.rbac, tc.files))
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want one containing %q", err, w)
				}
			}
		})
	}
}
