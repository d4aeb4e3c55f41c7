package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func TestTheClusterRoleHasTheRolesRules(t *testing.T) {
	raw, err := os.ReadFile("../../../manifests/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(bytes.NewReader(raw), &out); err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	var cr rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(out.Bytes(), &cr); err != nil {
		t.Fatalf("not a ClusterRole: %v", err)
	}
	if cr.Kind != "ClusterRole" || cr.Name != role.Name || len(cr.Rules) != len(role.Rules) {
		t.Fatalf("ClusterRole %s with %d rules, want %s with %d", cr.Name, len(cr.Rules), role.Name, len(role.Rules))
	}
}

func TestLeaderElectionRulesAreRefused(t *testing.T) {
	in := `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: etcd-operator
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
`
	err := run(strings.NewReader(in), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "leader_election_role.yaml") {
		t.Fatalf("run() = %v, want a refusal pointing at the leader-election Role", err)
	}
}
