package framework

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// Grants collects every rule bound to the operator's ServiceAccount.
func (e *Env) Grants(ctx context.Context) ([]rbac.Grant, error) {
	ns, sa := e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount
	bound := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == ns {
				return true
			}
		}
		return false
	}
	var grants []rbac.Grant
	crbs, err := e.Kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, b := range crbs.Items {
		if !bound(b.Subjects) {
			continue
		}
		rules, err := e.roleRules(ctx, "", b.RoleRef)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			grants = append(grants, rbac.Grant{Rule: r, Source: fmt.Sprintf("ClusterRoleBinding %s -> %s %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name)})
		}
	}
	rbs, err := e.Kube.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, b := range rbs.Items {
		// A RoleBinding's subject may omit the namespace: it defaults to the binding's.
		subjects := append([]rbacv1.Subject(nil), b.Subjects...)
		for i := range subjects {
			if subjects[i].Kind == rbacv1.ServiceAccountKind && subjects[i].Namespace == "" {
				subjects[i].Namespace = b.Namespace
			}
		}
		if !bound(subjects) {
			continue
		}
		rules, err := e.roleRules(ctx, b.Namespace, b.RoleRef)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			grants = append(grants, rbac.Grant{Namespace: b.Namespace, Rule: r, Source: fmt.Sprintf("RoleBinding %s/%s -> %s %s", b.Namespace, b.Name, b.RoleRef.Kind, b.RoleRef.Name)})
		}
	}
	return grants, nil
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
