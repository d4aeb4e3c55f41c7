package inventory

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/audit"
)

var (
	t0       = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	operator = "system:serviceaccount:etcd-operator-system:etcd-operator"
	id       = Identity{Operator: operator, Run: "kubernetes-admin", RunAgent: "etcdproof-run/aaaa", AgentPrefix: "etcdproof-run/"}
)

func lines(fs []Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.String())
	}
	return strings.Join(s, "\n")
}

// The cluster's namespace holds only what Kubernetes puts in every
// namespace when the cleanup cluster is created.
var specNSBefore = Snapshot{Objects: []Object{
	{Resource: "serviceaccounts", Namespace: "etcdproof-cleanup-x", Name: "default", UID: "sa"},
	{Resource: "configmaps", Namespace: "etcdproof-cleanup-x", Name: "kube-root-ca.crt", UID: "ca"},
}}

// The operator deleted its pods and Services with the CR but kept the
// claims its members' data lived on.
var specNSAfterCRDeleted = Snapshot{Objects: append(specNSBefore.Objects[:2:2],
	Object{Resource: "persistentvolumeclaims", Namespace: "etcdproof-cleanup-x", Name: "data-cleanup-1", UID: "pvc"},
	Object{Resource: "events", Namespace: "etcdproof-cleanup-x", Name: "cleanup-1.1", UID: "ev"},
)}

// Cleanup used to delete the cluster's namespace before its inventory: the
// namespace took the leaked claim with it and the check passed.
func TestAClaimLeftInTheClustersNamespaceIsALeftover(t *testing.T) {
	clusterBefore := Snapshot{Objects: []Object{{Resource: "namespaces", Name: "default", UID: "d"}}}
	afterNamespaceDeleted := clusterBefore
	if l := Leftovers(clusterBefore, afterNamespaceDeleted, DefaultExclusions); len(l) != 0 {
		t.Fatalf("the old order should have seen nothing, saw %v", l)
	}

	v := InNamespace(specNSBefore, specNSAfterCRDeleted, nil, Rules{Exclusions: DefaultExclusions})
	if got := lines(v.Leftovers); got != "persistentvolumeclaims etcdproof-cleanup-x/data-cleanup-1 (still there after the cluster's CR was deleted)" || v.Clean() {
		t.Errorf("leftovers:\n%s", got)
	}
}

func TestARetainedClaimIsReportedNotFailed(t *testing.T) {
	rules := Rules{Exclusions: DefaultExclusions, Retains: []Retention{{Resource: "persistentvolumeclaims", Reason: "data outlives the cluster until the user deletes it"}}}
	v := InNamespace(specNSBefore, specNSAfterCRDeleted, nil, rules)
	if !v.Clean() || lines(v.Retained) != "persistentvolumeclaims etcdproof-cleanup-x/data-cleanup-1 (retained: data outlives the cluster until the user deletes it)" {
		t.Errorf("verdict = %+v", v)
	}
}

func TestInNamespaceSparesWhatTheRunCreatedAndWhatBelongsToIt(t *testing.T) {
	before := Snapshot{Objects: []Object{
		{Resource: "deployments.apps", Namespace: "op", Name: "etcd-operator", UID: "dep"},
		{Resource: "replicasets.apps", Namespace: "op", Name: "etcd-operator-1", UID: "rs", Owner: "dep"},
	}}
	after := Snapshot{Objects: append(before.Objects[:2:2],
		// The profile's extra Service, made by the run, and what it brings.
		Object{Resource: "services", Namespace: "op", Name: "c1", UID: "svc"},
		Object{Resource: "endpoints", Namespace: "op", Name: "c1", UID: "ep"},
		Object{Resource: "endpointslices.discovery.k8s.io", Namespace: "op", Name: "c1-abcde", UID: "eps", Owner: "svc"},
		// The operator's pod, restarted by its ReplicaSet.
		Object{Resource: "pods", Namespace: "op", Name: "etcd-operator-1-xyz", UID: "pod", Owner: "rs"},
		// A member's Service the operator forgot, with its slice.
		Object{Resource: "services", Namespace: "op", Name: "c1-client", UID: "svc2"},
		Object{Resource: "endpointslices.discovery.k8s.io", Namespace: "op", Name: "c1-client-abcde", UID: "eps2", Owner: "svc2"},
	)}
	v := InNamespace(before, after, []string{"svc"}, Rules{})
	want := "endpointslices.discovery.k8s.io op/c1-client-abcde (still there after the cluster's CR was deleted)\nservices op/c1-client (still there after the cluster's CR was deleted)"
	if got := lines(v.Leftovers); got != want {
		t.Errorf("leftovers:\n%s\nwant:\n%s", got, want)
	}
}

func TestAnUnlistableResourceFailsNamingIt(t *testing.T) {
	after := specNSBefore
	after.Skipped = []Unlisted{
		{Resource: "etcdbackups.example.com", Namespaced: true, Error: "the server is currently unable to handle the request"},
		// Not in a namespace: says nothing about one.
		{Resource: "clusterroles.rbac.authorization.k8s.io", Error: "forbidden"},
		{Resource: "events", Namespaced: true, Error: "excluded anyway"},
	}
	v := InNamespace(specNSBefore, after, nil, Rules{Exclusions: DefaultExclusions})
	failing, _ := v.Problems()
	if v.Clean() || strings.Join(failing, "\n") != "cannot list etcdbackups.example.com: the server is currently unable to handle the request" {
		t.Errorf("failing = %q", failing)
	}

	v = Cluster(clusterBefore, Snapshot{Objects: clusterBefore.Objects, Skipped: after.Skipped}, nil, NewAttribution(nil, id), Rules{Exclusions: DefaultExclusions})
	failing, _ = v.Problems()
	if len(failing) != 2 || !strings.Contains(failing[0], "clusterroles.rbac.authorization.k8s.io: forbidden") {
		t.Errorf("failing = %q, want both unlistable resources", failing)
	}
}

// Every list failed: nothing is left to see, which is not a clean cluster.
func TestAnEmptyInventoryFails(t *testing.T) {
	allFailed := Snapshot{Skipped: []Unlisted{{Resource: "namespaces", Error: "Unauthorized"}, {Resource: "pods", Namespaced: true, Error: "Unauthorized"}}}
	v := Cluster(clusterBefore, allFailed, nil, NewAttribution(nil, id), Rules{})
	failing, _ := v.Problems()
	if v.Clean() || !strings.Contains(strings.Join(failing, "\n"), "cannot list namespaces: Unauthorized") ||
		!strings.Contains(strings.Join(failing, "\n"), "the inventory after uninstall: it holds no object at all") {
		t.Errorf("failing = %q", failing)
	}
	// Even with no error recorded.
	if v := Cluster(clusterBefore, Snapshot{}, nil, NewAttribution(nil, id), Rules{}); v.Clean() {
		t.Error("an empty inventory passed")
	}
}

var clusterBefore = Snapshot{Objects: []Object{
	{Resource: "namespaces", Name: "default", UID: "d"},
	{Resource: "namespaces", Name: "kube-system", UID: "ks"},
	{Resource: "daemonsets.apps", Namespace: "kube-system", Name: "kube-proxy", UID: "ds"},
}}

func creation(user, agent, resource, ns, name string, at time.Time) audit.Creation {
	return audit.Creation{Resource: resource, Namespace: ns, Name: name, User: user, UserAgent: agent, Received: at, Completed: at.Add(50 * time.Millisecond)}
}

func TestClusterAttributesWhatOthersCreatedDuringTheRun(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	after := Snapshot{Objects: append(clusterBefore.Objects[:3:3],
		// Someone else's namespace, its claim and the volume provisioned for it.
		Object{Resource: "namespaces", Name: "team-a", UID: "ta", Created: at},
		Object{Resource: "persistentvolumeclaims", Namespace: "team-a", Name: "data", UID: "tad", Created: at},
		Object{Resource: "persistentvolumes", Name: "pvc-tad", UID: "pvtad", Created: at.Add(time.Second), For: &Ref{"persistentvolumeclaims", "team-a", "data"}},
		Object{Resource: "services", Namespace: "team-a", Name: "web", UID: "tas", Created: at},
		Object{Resource: "ipaddresses.networking.k8s.io", Name: "10.96.0.57", UID: "taip", Created: at, For: &Ref{"services", "team-a", "web"}},
		Object{Resource: "pods", Namespace: "team-a", Name: "web-7d9f-abcde", UID: "tap", Created: at},
		// Another etcdproof run on the same kubeconfig: its spec namespace.
		Object{Resource: "namespaces", Name: "etcdproof-create-q", UID: "oq", Created: at},
		// kube-proxy's pod, re-created by its DaemonSet.
		Object{Resource: "pods", Namespace: "kube-system", Name: "kube-proxy-zz", UID: "kp", Owner: "ds", Created: at},
		// Left by this run's operator and install.
		Object{Resource: "configmaps", Namespace: "kube-system", Name: "etcd-operator-lock", UID: "lock", Created: at},
		Object{Resource: "namespaces", Name: "etcdproof-cleanup-x", UID: "ours", Created: at},
		Object{Resource: "persistentvolumeclaims", Namespace: "etcdproof-cleanup-x", Name: "data-1", UID: "pvc", Created: at},
		Object{Resource: "persistentvolumes", Name: "pvc-1", UID: "pv", Created: at, For: &Ref{"persistentvolumeclaims", "etcdproof-cleanup-x", "data-1"}},
		Object{Resource: "clusterroles.rbac.authorization.k8s.io", Name: "etcd-operator", UID: "cr", Created: at},
		Object{Resource: "namespaces", Name: "cert-manager", UID: "cm", Created: at},
		// No one knows: not in the log.
		Object{Resource: "secrets", Namespace: "default", Name: "mystery", UID: "m", Created: at},
	)}
	log := []audit.Creation{
		creation("alice", "kubectl/v1.34.4", "namespaces", "", "team-a", at),
		creation("alice", "kubectl/v1.34.4", "persistentvolumeclaims", "team-a", "data", at),
		creation("alice", "kubectl/v1.34.4", "services", "team-a", "web", at),
		creation("system:serviceaccount:kube-system:replicaset-controller", "kube-controller-manager", "pods", "team-a", "", at.Add(20*time.Millisecond)),
		creation("kubernetes-admin", "etcdproof/v0 etcdproof-run/bbbb", "namespaces", "", "", at),
		creation(operator, "etcd-operator", "configmaps", "kube-system", "etcd-operator-lock", at),
		creation("kubernetes-admin", "kubectl/v1.34.4", "namespaces", "", "cert-manager", at),
	}
	v := Cluster(clusterBefore, after, []string{"etcdproof-cleanup-x"}, NewAttribution(log, id), Rules{Exclusions: DefaultExclusions})
	want := `clusterroles.rbac.authorization.k8s.io etcd-operator (cluster-scoped, new since install)
configmaps kube-system/etcd-operator-lock (created by the operator (system:serviceaccount:etcd-operator-system:etcd-operator))
namespaces cert-manager (created by the run (kubernetes-admin))
namespaces etcdproof-cleanup-x (a namespace the run created)
persistentvolumeclaims etcdproof-cleanup-x/data-1 (in namespace etcdproof-cleanup-x, which the run created)
persistentvolumes pvc-1 (for persistentvolumeclaims etcdproof-cleanup-x/data-1, in a namespace the run created)`
	if got := lines(v.Leftovers); got != want {
		t.Errorf("leftovers:\n%s\nwant:\n%s", got, want)
	}
	wantIgnored := `ipaddresses.networking.k8s.io 10.96.0.57 (for services team-a/web, created during the run by alice)
namespaces etcdproof-create-q (created during the run by kubernetes-admin (another run: etcdproof/v0 etcdproof-run/bbbb))
namespaces team-a (created during the run by alice)
persistentvolumeclaims team-a/data (created during the run by alice)
persistentvolumes pvc-tad (for persistentvolumeclaims team-a/data, created during the run by alice)
pods team-a/web-7d9f-abcde (created during the run by system:serviceaccount:kube-system:replicaset-controller)
services team-a/web (created during the run by alice)`
	if got := lines(v.Ignored); got != wantIgnored {
		t.Errorf("ignored:\n%s\nwant:\n%s", got, wantIgnored)
	}
	if got := lines(v.Unattributed); got != "secrets default/mystery (creator unknown: no creation of it in the audit log since the run started)" {
		t.Errorf("unattributed:\n%s", got)
	}
}

// Without the audit log nothing outside the run's namespaces can be
// attributed: the check cannot pass, nor can it fail on others' objects.
func TestClusterWithoutTheAuditLogIsUnjudged(t *testing.T) {
	after := Snapshot{Objects: append(clusterBefore.Objects[:3:3], Object{Resource: "configmaps", Namespace: "default", Name: "x", UID: "x"})}
	v := Cluster(clusterBefore, after, nil, Unattributable("no --audit-log given"), Rules{})
	failing, unjudged := v.Problems()
	if len(failing) != 0 || strings.Join(unjudged, "") != "configmaps default/x (creator unknown: no --audit-log given)" {
		t.Errorf("failing = %q, unjudged = %q", failing, unjudged)
	}
}

func TestAttributionLearnsTheRunsUserFromItsAgent(t *testing.T) {
	noUser := id
	noUser.Run = ""
	log := []audit.Creation{
		creation("kind-admin", "etcdproof/v0 etcdproof-run/aaaa", "namespaces", "", "", t0),
		creation("kind-admin", "kubectl/v1.16.15", "clusterroles.rbac.authorization.k8s.io", "", "op", t0.Add(time.Minute)),
	}
	if c := NewAttribution(log, noUser).CreatorOf(Object{Resource: "clusterroles.rbac.authorization.k8s.io", Name: "op", Created: t0.Add(time.Minute)}); c.Party != PartyRun {
		t.Errorf("creator = %+v, want the run", c)
	}
	if c := NewAttribution(log[1:], noUser).CreatorOf(Object{Resource: "clusterroles.rbac.authorization.k8s.io", Name: "op", Created: t0.Add(time.Minute)}); c.Party != PartyUnknown || !strings.Contains(c.Why, "run's own user is not known") {
		t.Errorf("creator = %+v, want unknown", c)
	}
}

func TestAttributionPicksTheCreationOfThisIncarnation(t *testing.T) {
	log := []audit.Creation{
		creation("alice", "kubectl", "configmaps", "a", "c", t0),
		creation(operator, "op", "configmaps", "a", "c", t0.Add(time.Minute+300*time.Millisecond)),
	}
	a := NewAttribution(log, id)
	if c := a.CreatorOf(Object{Resource: "configmaps", Namespace: "a", Name: "c", Created: t0.Add(time.Minute)}); c.Party != PartyOperator {
		t.Errorf("re-created object: creator = %+v, want the operator", c)
	}
	if c := a.CreatorOf(Object{Resource: "configmaps", Namespace: "a", Name: "c", Created: t0}); c.Party != PartyOther {
		t.Errorf("first object: creator = %+v, want alice", c)
	}
	// generateName creations in the same second by two parties cannot be told apart.
	log = []audit.Creation{
		creation("alice", "kubectl", "pods", "a", "", t0.Add(100*time.Millisecond)),
		creation(operator, "op", "pods", "a", "", t0.Add(200*time.Millisecond)),
	}
	if c := NewAttribution(log, id).CreatorOf(Object{Resource: "pods", Namespace: "a", Name: "p-x", Created: t0}); c.Party != PartyUnknown || !strings.Contains(c.Why, "cannot tell whose") {
		t.Errorf("creator = %+v, want unknown", c)
	}
	// 1.16 serves ingresses in two groups: the object listed under one was created under the other.
	log = []audit.Creation{creation(operator, "op", "ingresses.extensions", "a", "i", t0)}
	if c := NewAttribution(log, id).CreatorOf(Object{Resource: "ingresses.networking.k8s.io", Namespace: "a", Name: "i", Created: t0}); c.Party != PartyOperator {
		t.Errorf("creator = %+v, want the operator", c)
	}
}
