package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// usedBy reports whether any use falls under the grant.
func usedBy(g Grant, uses []Use) bool {
	for _, u := range uses {
		if (g.Namespace == "" || u.Namespace == g.Namespace) && ruleAllows(g.Rule, u.APIGroup, u.Resource, u.Verb) {
			return true
		}
	}
	return false
}

// singleNamespace reports whether every use under a cluster-wide grant was
// in one and the same namespace. Uses across several namespaces (an
// operator managing clusters anywhere) or at cluster scope justify it.
func singleNamespace(g Grant, uses []Use) (string, bool) {
	ns := ""
	for _, u := range uses {
		if !ruleAllows(g.Rule, u.APIGroup, u.Resource, u.Verb) {
			continue
		}
		if u.Namespace == "" || (ns != "" && u.Namespace != ns) {
			return "", false
		}
		ns = u.Namespace
	}
	return ns, ns != ""
}

func granted(u Use, grants []Grant) bool {
	for _, g := range grants {
		if (g.Namespace == "" || g.Namespace == u.Namespace) && ruleAllows(g.Rule, u.APIGroup, u.Resource, u.Verb) {
			return true
		}
	}
	return false
}

// ruleAllows reports whether r allows verb on resource in group; "*" as the
// group or resource asks about any (dangerous grants).
func ruleAllows(r rbacv1.PolicyRule, group, resource, verb string) bool {
	if len(r.NonResourceURLs) > 0 {
		return false
	}
	return (group == "*" || matches(r.APIGroups, group)) && (resource == "*" || resourceMatches(r.Resources, resource)) && matches(r.Verbs, verb)
}

func matches(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourceMatches is matches for resources, where "*/scale" names the scale
// subresource of every resource, as in RBAC.
func resourceMatches(list []string, resource string) bool {
	if matches(list, resource) {
		return true
	}
	_, sub, ok := strings.Cut(resource, "/")
	return ok && slices.Contains(list, "*/"+sub)
}

func describeRule(r rbacv1.PolicyRule) string {
	groups := make([]string, len(r.APIGroups))
	for i, g := range r.APIGroups {
		groups[i] = groupName(g)
	}
	return fmt.Sprintf("[%s] on [%s] in groups [%s]", strings.Join(r.Verbs, ","), strings.Join(r.Resources, ","), strings.Join(groups, ","))
}
