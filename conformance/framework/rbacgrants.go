package framework

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// Grants collects every rule bound to the operator's ServiceAccount,
// through every subject that reaches it: the ServiceAccount itself, the
// groups of all ServiceAccounts (system:serviceaccounts) and of those of its
// namespace (system:serviceaccounts:<ns>), and the User form of its name
// (system:serviceaccount:<ns>:<name>). An aggregated ClusterRole's rules
// are read as the aggregation controller filled them in.
func (e *Env) Grants(ctx context.Context) ([]rbac.Grant, error) {
	reaches := serviceAccountSubjects(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount)
	var grants []rbac.Grant
	crbs, err := e.Kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, b := range crbs.Items {
		via, ok := reaches(b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := e.roleRules(ctx, "", b.RoleRef)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			grants = append(grants, rbac.Grant{Rule: r, Source: fmt.Sprintf("ClusterRoleBinding %s%s -> %s %s", b.Name, via, b.RoleRef.Kind, b.RoleRef.Name)})
		}
	}
	rbs, err := e.Kube.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, b := range rbs.Items {
		via, ok := reaches(b.Subjects, b.Namespace)
		if !ok {
			continue
		}
		rules, err := e.roleRules(ctx, b.Namespace, b.RoleRef)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			grants = append(grants, rbac.Grant{Namespace: b.Namespace, Rule: r, Source: fmt.Sprintf("RoleBinding %s/%s%s -> %s %s", b.Namespace, b.Name, via, b.RoleRef.Kind, b.RoleRef.Name)})
		}
	}
	return grants, nil
}

// serviceAccountSubjects returns a matcher for the binding subjects that
// reach ServiceAccount ns/sa, as the API server's authorizer resolves them
// (serviceaccount.MakeUsername and MakeGroupNames); it says how (" (via
// Group system:serviceaccounts)"), "" for the ServiceAccount itself. A
// RoleBinding's ServiceAccount subject may omit its namespace: it is the
// binding's (bindingNS).
func serviceAccountSubjects(ns, sa string) func(subjects []rbacv1.Subject, bindingNS string) (string, bool) {
	user := serviceaccount.MakeUsername(ns, sa)
	groups := serviceaccount.MakeGroupNames(ns)
	return func(subjects []rbacv1.Subject, bindingNS string) (string, bool) {
		for _, s := range subjects {
			switch s.Kind {
			case rbacv1.ServiceAccountKind:
				namespace := s.Namespace
				if namespace == "" {
					namespace = bindingNS
				}
				if s.Name == sa && namespace == ns {
					return "", true
				}
			case rbacv1.UserKind:
				if s.Name == user {
					return " (via User " + user + ")", true
				}
			case rbacv1.GroupKind:
				if slices.Contains(groups, s.Name) {
					return " (via Group " + s.Name + ")", true
				}
			}
		}
		return "", false
	}
}

func (e *Env) roleRules(ctx context.Context, namespace string, ref rbacv1.RoleRef) ([]rbacv1.PolicyRule, error) {
	if ref.Kind == "ClusterRole" {
		r, err := e.Kube.RbacV1().ClusterRoles().Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("ClusterRole %s: %w", ref.Name, err)
		}
		return r.Rules, nil
	}
	r, err := e.Kube.RbacV1().Roles(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("Role %s/%s: %w", namespace, ref.Name, err)
	}
	return r.Rules, nil
}
