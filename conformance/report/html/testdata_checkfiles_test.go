package html

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdproof/etcdproof/conformance/inventory"
	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// The simulated run's rbac and cleanup checks: the files they write into
// the report dir, made as specs.RBACSpec and specs.CleanupSpec make them
// (the same types, judgements and marshalling), and the notes they record.

// The namespaces of the simulated run: the operator's, and one per check
// that makes a cluster.
const simulatedOperatorNS = "etcd-operator-system"

var simulatedClusterNamespaces = []string{"etcdproof-create-8w2nc", "etcdproof-replace-5vz7m", "etcdproof-upgrade-q4t9d", "etcdproof-cleanup-j6xrt"}

// simulatedRBAC is what the reference operator's ServiceAccount requested
// over the run and what its install grants it (a ClusterRole, and a Role
// for leader election in its own namespace), judged by rbac.Compare as
// RBACSpec judges a profile without a declared role. Every request was
// granted, so nothing fails; the grants for restores, secrets and core
// events served none (the run has no backup-restore check, and the
// operator records events.k8s.io events).
func simulatedRBAC() (uses []rbac.Use, grants []rbac.Grant, diff rbac.Diff) {
	use := func(ns, group, resource string, verbs ...string) {
		for _, v := range verbs {
			uses = append(uses, rbac.Use{Namespace: ns, APIGroup: group, Resource: resource, Verb: v})
		}
	}
	const etcdGroup = "etcd.database.coreos.com"
	// controller-runtime's caches list and watch cluster-wide.
	for _, r := range []struct{ group, resource string }{{"", "pods"}, {"", "services"}, {etcdGroup, "etcdclusters"}, {"policy", "poddisruptionbudgets"}} {
		use("", r.group, r.resource, "list", "watch")
	}
	use(simulatedOperatorNS, "coordination.k8s.io", "leases", "create", "get", "update")
	for _, ns := range simulatedClusterNamespaces {
		use(ns, "", "pods", "create")
		use(ns, "", "services", "create")
		use(ns, etcdGroup, "etcdclusters/status", "update")
		use(ns, "events.k8s.io", "events", "create")
	}
	use("etcdproof-replace-5vz7m", "", "pods", "delete")
	use("etcdproof-upgrade-q4t9d", "", "pods", "patch")

	rule := func(group string, resources []string, verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
	}
	const cluster = "ClusterRoleBinding etcd-operator -> ClusterRole etcd-operator"
	for _, r := range []rbacv1.PolicyRule{
		rule("", []string{"persistentvolumeclaims", "pods"}, "create", "delete", "get", "list", "patch", "watch"),
		rule("", []string{"secrets"}, "get"),
		rule("", []string{"services"}, "create", "get", "list", "patch", "watch"),
		rule(etcdGroup, []string{"etcdclusters"}, "get", "list", "watch"),
		rule(etcdGroup, []string{"etcdclusters/status"}, "get", "patch", "update"),
		rule(etcdGroup, []string{"etcdrestores"}, "create", "delete", "get", "list", "watch"),
		rule("events.k8s.io", []string{"events"}, "create", "patch"),
		rule("policy", []string{"poddisruptionbudgets"}, "create", "get", "list", "update", "watch"),
	} {
		grants = append(grants, rbac.Grant{Rule: r, Source: cluster})
	}
	const leader = "RoleBinding " + simulatedOperatorNS + "/etcd-operator-leader-election -> Role etcd-operator-leader-election"
	grants = append(grants,
		rbac.Grant{Namespace: simulatedOperatorNS, Rule: rule("coordination.k8s.io", []string{"leases"}, "get", "create", "update"), Source: leader},
		rbac.Grant{Namespace: simulatedOperatorNS, Rule: rule("", []string{"events"}, "create", "patch"), Source: leader})
	diff = rbac.Compare(uses, grants, rbac.Scope{OperatorNamespace: simulatedOperatorNS, ManyNamespaces: true})
	return uses, grants, diff
}

// simulatedRBACNotes are the notes RBACSpec records for simulatedRBAC.
func simulatedRBACNotes() []string {
	uses, _, diff := simulatedRBAC()
	var notes []string
	for _, u := range diff.Unused {
		notes = append(notes, "unused grant: "+u)
	}
	return append(notes, fmt.Sprintf("%d distinct requests observed; minimal role written to rbac/minimal-role.yaml", len(uses)))
}

// A lease the API server made for itself during the run: created by
// someone else, reported and not judged.
var simulatedIgnored = inventory.Object{Resource: "leases.coordination.k8s.io", Namespace: "kube-system", Name: "apiserver-kx4bq2l7f3vyhs4rcgh5rmkg2e",
	UID: "0d6c3f7e-5a11-4c7e-9a52-3f1c8e2b7d40", Created: runStarted.Add(128 * time.Second)}

// simulatedCleanup is the cleanup check's two verdicts, judged by
// inventory.InNamespace and inventory.Cluster: the cluster's namespace
// holds what it held before the CR once the CR is gone, and after
// uninstall the whole cluster holds what it held before install but the
// API server's new lease and an event (excluded).
func simulatedCleanup() (inNamespace, whole inventory.Verdict) {
	ns := simulatedClusterNamespaces[3]
	nsBefore := inventory.Snapshot{Objects: []inventory.Object{
		{Resource: "configmaps", Namespace: ns, Name: "kube-root-ca.crt", UID: "6b1e0f52-9d3a-4d0e-8c61-2a7f5e9b3c14"},
		{Resource: "serviceaccounts", Namespace: ns, Name: "default", UID: "a3f9c2d8-1e47-4b6a-9f05-7c2d8e1a4b93"},
	}}
	rules := inventory.Rules{Exclusions: inventory.DefaultExclusions}
	inNamespace = inventory.InNamespace(nsBefore, nsBefore, nil, rules)

	before := inventory.Snapshot{Objects: []inventory.Object{
		{Resource: "namespaces", Name: "default", UID: "f2c4a9e1-7b3d-4e58-a0c6-9d1b5e3f7a28"},
		{Resource: "namespaces", Name: "kube-system", UID: "c8e1b5d3-2f6a-4c97-b4e0-1a9d7f3c5e62"},
	}}
	after := inventory.Snapshot{Objects: append(before.Objects[:2:2], simulatedIgnored,
		inventory.Object{Resource: "events", Namespace: "default", Name: "etcdproof-nodes-worker.18e2c5", UID: "5e7a1c9d-3b2f-4a86-8d14-6f0e2b9c7a35"})}
	whole = inventory.Cluster(before, after, append(simulatedClusterNamespaces, simulatedOperatorNS), createdBy("system:apiserver"), rules)
	return inNamespace, whole
}

// createdBy attributes every object to one user other than the run and
// the operator.
type createdBy string

func (c createdBy) CreatorOf(inventory.Object) inventory.Creator {
	return inventory.Creator{Party: inventory.PartyOther, User: string(c)}
}

// simulatedCleanupNotes are the notes CleanupSpec records for
// simulatedCleanup.
func simulatedCleanupNotes() []string {
	var notes []string
	for _, ex := range inventory.DefaultExclusions {
		notes = append(notes, "excluded "+ex.Resource+": "+ex.Reason)
	}
	_, whole := simulatedCleanup()
	return append(notes, fmt.Sprintf("%d object(s) created during the run by others, not judged (cleanup/leftovers.json)", len(whole.Ignored)))
}

// simulatedCheckFiles are the files the rbac and cleanup checks write,
// keyed by their path in the report dir, marshalled as
// framework.Env.WriteJSON and WriteYAML do.
func simulatedCheckFiles(t *testing.T) map[string][]byte {
	t.Helper()
	uses, grants, diff := simulatedRBAC()
	var declared []rbac.Grant
	roles, clusterRole := rbac.MinimalRoles("etcd-operator-minimal", uses)
	var docs []any
	for _, r := range roles {
		docs = append(docs, r)
	}
	if clusterRole != nil {
		docs = append(docs, clusterRole)
	}
	inNamespace, whole := simulatedCleanup()
	files := map[string][]byte{}
	for name, v := range map[string]any{
		rbacRecordFile:                     rbac.Record{Uses: uses, Grants: grants, Declared: declared, Diff: diff},
		"cleanup/namespace-leftovers.json": inNamespace,
		"cleanup/leftovers.json":           whole,
	} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": docs})
	if err != nil {
		t.Fatal(err)
	}
	files[minimalRoleFile] = b
	return files
}
