package rbac

import (
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MinimalRoles turns observed uses into the smallest Roles (one per
// namespace) and a ClusterRole for cluster-scoped uses.
func MinimalRoles(name string, uses []Use) (roles []rbacv1.Role, clusterRole *rbacv1.ClusterRole) {
	byNS := map[string]map[[2]string][]string{}
	for _, u := range uses {
		if byNS[u.Namespace] == nil {
			byNS[u.Namespace] = map[[2]string][]string{}
		}
		k := [2]string{u.APIGroup, u.Resource}
		if !slices.Contains(byNS[u.Namespace][k], u.Verb) {
			byNS[u.Namespace][k] = append(byNS[u.Namespace][k], u.Verb)
		}
	}
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		rules := rulesOf(byNS[ns])
		if ns == "" {
			clusterRole = &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
			continue
		}
		roles = append(roles, rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules})
	}
	return roles, clusterRole
}

func rulesOf(m map[[2]string][]string) []rbacv1.PolicyRule {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	rules := make([]rbacv1.PolicyRule, 0, len(keys))
	for _, k := range keys {
		verbs := append([]string(nil), m[k]...)
		sort.Strings(verbs)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k[0]}, Resources: []string{k[1]}, Verbs: verbs})
	}
	return rules
}
