package framework

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// TestGrantsFollowEveryBindingToTheServiceAccount: a grant reaches the
// operator's ServiceAccount through its own subject, but also through the
// groups every ServiceAccount (system:serviceaccounts) or every one of its
// namespace (system:serviceaccounts:<ns>) is in, and through the User form
// of its name. A wildcard ClusterRole bound to its namespace's group was
// invisible before: the rbac check saw no grant and passed.
func TestGrantsFollowEveryBindingToTheServiceAccount(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	p := loadProfile(t, "../profiles/reference.yaml")
	ctx := context.Background()
	e := envOnAPIServer(t, p)
	ns, sa := p.Operator.Namespace, p.Operator.ServiceAccount
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rbacAPI := e.Kube.RbacV1()
	everything := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "everything"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	tokens := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}}}}
	nodeProxy := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-proxy"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}}}}
	unrelated := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	for _, r := range []*rbacv1.ClusterRole{everything, nodeProxy, unrelated} {
		if _, err := rbacAPI.ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rbacAPI.Roles(ns).Create(ctx, tokens, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clusterBinding := func(name, role string, s rbacv1.Subject) {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}, Subjects: []rbacv1.Subject{s}}
		if _, err := rbacAPI.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	clusterBinding("namespace-group", "everything", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + ns})
	clusterBinding("all-serviceaccounts", "node-proxy", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts"})
	clusterBinding("other-namespace-group", "unrelated", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:elsewhere"})
	userBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "user-form", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tokens"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccount:" + ns + ":" + sa}}}
	if _, err := rbacAPI.RoleBindings(ns).Create(ctx, userBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	grants, err := e.Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, g := range grants {
		sources = append(sources, g.Source)
	}
	all := strings.Join(sources, "\n")
	for _, want := range []string{"namespace-group", "all-serviceaccounts", "user-form"} {
		if !strings.Contains(all, want) {
			t.Errorf("grants miss the binding %s; grants from:\n%s", want, all)
		}
	}
	if strings.Contains(all, "other-namespace-group") || strings.Contains(all, "unrelated") {
		t.Errorf("a binding to another namespace's ServiceAccounts counted:\n%s", all)
	}
	d := rbac.Compare(nil, grants, rbac.Scope{OperatorNamespace: ns})
	var findings []string
	for _, f := range d.Findings {
		findings = append(findings, f.Message)
	}
	got := strings.Join(findings, "\n")
	for _, want := range []string{rbac.FindingWildcard + ": ClusterRoleBinding namespace-group", "serviceaccounts/token", "nodes/proxy"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
}
