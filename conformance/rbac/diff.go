package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// Grant is one rule the operator holds through a binding.
type Grant struct {
	// Namespace is empty when granted cluster-wide (ClusterRoleBinding).
	Namespace string            `json:"namespace,omitempty"`
	Rule      rbacv1.PolicyRule `json:"rule"`
	// Source names the binding and role, e.g. "RoleBinding ns/x -> Role y".
	Source string `json:"source"`
}

// Finding is one reason the RBAC check fails.
type Finding struct {
	Kind    string `json:"kind"`
	Source  string `json:"source"`
	Message string `json:"message"`
}

// Finding kinds; the failure message starts with them.
const (
	FindingWildcard     = "wildcard grant"
	FindingClusterScope = "cluster scope not needed"
	FindingDangerous    = "dangerous grant"
	FindingNotGranted   = "used but not granted"
	FindingNotDeclared  = "used but not declared"
)

// Diff is the comparison of use and grants.
type Diff struct {
	Findings []Finding `json:"findings,omitempty"`
	// Unused lists grants no observed request needed (reported, not failed):
	// the declared ones when the operator declares its own (CompareDeclared).
	Unused []string `json:"unused,omitempty"`
	// Excess lists what the installed grant allows beyond the declared one
	// (CompareDeclared; reported, not failed, and no reason to pass).
	Excess []string `json:"excess,omitempty"`
}

// dangerous are grants an etcd operator never needs and that let it read
// every secret, run code in pods or raise its own privileges.
var dangerous = []struct {
	group, resource string
	verbs           []string
	why             string
}{
	{"", "secrets", []string{"list", "watch"}, "reads every secret in scope"},
	{"", "pods/exec", []string{"create", "get"}, "runs commands in any pod"},
	{"", "pods/attach", []string{"create", "get"}, "attaches to any pod"},
	{"rbac.authorization.k8s.io", "*", []string{"escalate", "bind"}, "raises its own privileges"},
	{"*", "*", []string{"impersonate"}, "acts as other users"},
	{"", "serviceaccounts/token", []string{"create"}, "mints tokens of any ServiceAccount in scope, and acts as it"},
	{"", "nodes/proxy", []string{"get", "create"}, "reaches every kubelet's API, which runs commands in any pod on the node"},
}

// Scope says where the operator is meant to work, which decides whether a
// cluster-wide grant used in one namespace only is excess.
type Scope struct {
	// OperatorNamespace is where the operator runs (its leases, its events).
	OperatorNamespace string
	// ManyNamespaces is true when the operator is installed to manage
	// clusters in any namespace: a run that exercised one namespace (a label
	// filter) then says nothing about the scope it needs, except for what it
	// used in its own namespace, which no other namespace will ever need.
	ManyNamespaces bool
}

// Compare diffs observed uses against grants.
func Compare(uses []Use, grants []Grant, scope Scope) Diff {
	var d Diff
	d.judge(grants, uses, scope)
	for _, u := range uses {
		if !granted(u, grants) {
			d.Findings = append(d.Findings, Finding{FindingNotGranted, "", fmt.Sprintf("%s: %s (the request was denied or the binding changed during the run)", FindingNotGranted, u)})
		}
	}
	return d
}

// CompareDeclared judges the rules the operator declares it needs in place
// of the grant its install happens to give it (a profile installing it with
// another operator's Role): every use must still have been granted by the
// install (a denied request is a failure), and must be declared; the
// declared rules are judged like a grant (wildcards, dangerous grants,
// cluster scope) and the unused ones listed. What the install grants beyond
// the declared rules is listed in Excess.
func CompareDeclared(uses []Use, installed, declared []Grant, scope Scope) Diff {
	var d Diff
	d.judge(declared, uses, scope)
	for _, u := range uses {
		if !granted(u, installed) {
			d.Findings = append(d.Findings, Finding{FindingNotGranted, "", fmt.Sprintf("%s: %s (the request was denied or the binding changed during the run)", FindingNotGranted, u)})
		}
		if !granted(u, declared) {
			d.Findings = append(d.Findings, Finding{FindingNotDeclared, "", fmt.Sprintf("%s: %s (no declared rule allows it)", FindingNotDeclared, u)})
		}
	}
	d.Excess = excess(installed, declared, uses)
	return d
}

// judge adds the findings about the grants themselves, and their unused rules.
func (d *Diff) judge(grants []Grant, uses []Use, scope Scope) {
	for _, g := range grants {
		r := g.Rule
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
			d.Findings = append(d.Findings, Finding{FindingWildcard, g.Source, fmt.Sprintf("%s: %s grants %s", FindingWildcard, g.Source, describeRule(r))})
		}
		for _, dg := range dangerous {
			for _, v := range dg.verbs {
				if ruleAllows(r, dg.group, dg.resource, v) {
					d.Findings = append(d.Findings, Finding{FindingDangerous, g.Source, fmt.Sprintf("%s: %s allows %s %s (%s)", FindingDangerous, g.Source, v, dg.resource, dg.why)})
					break
				}
			}
		}
		if g.Namespace == "" {
			if ns, ok := singleNamespace(g, uses); ok && (!scope.ManyNamespaces || ns == scope.OperatorNamespace) {
				d.Findings = append(d.Findings, Finding{FindingClusterScope, g.Source, fmt.Sprintf("%s: %s grants %s cluster-wide but every use was in namespace %s: a Role there would do", FindingClusterScope, g.Source, describeRule(r), ns)})
			}
		}
		if !usedBy(g, uses) {
			d.Unused = append(d.Unused, fmt.Sprintf("%s: %s", g.Source, describeRule(r)))
		}
	}
}

// excess describes, for each installed rule, what it allows that no
// declared rule does: rule by rule, wildcards taken literally (a "*" verb
// is covered by a declared "*" only), as RBAC's own escalation check does.
func excess(installed, declared []Grant, uses []Use) []string {
	var out []string
	for _, g := range installed {
		beyond := beyondDeclared(g, declared)
		if len(beyond) == 0 {
			continue
		}
		parts := make([]string, len(beyond))
		for i, r := range beyond {
			parts[i] = describeRule(r)
		}
		how := "granted by the install, not used"
		if slices.ContainsFunc(uses, func(u Use) bool {
			return (g.Namespace == "" || g.Namespace == u.Namespace) && ruleAllows(g.Rule, u.APIGroup, u.Resource, u.Verb) && !granted(u, declared)
		}) {
			how = "granted by the install and used: see the findings"
		}
		out = append(out, fmt.Sprintf("installed grant exceeds the declared rules: %s grants %s (%s)", g.Source, strings.Join(parts, "; "), how))
	}
	return out
}

// beyondDeclared is the part of g's rule that no declared rule in its scope
// covers, as rules (one per API group and verb list, resources merged).
// Coverage is RBAC's own (validation.Covers): wildcards taken literally,
// "*/sub" for a subresource of any resource, "/path/*" for URLs under a
// path, and each resource name covered by some declared rule.
func beyondDeclared(g Grant, declared []Grant) []rbacv1.PolicyRule {
	var owners []rbacv1.PolicyRule
	for _, dg := range declared {
		if dg.Namespace == "" || (g.Namespace != "" && dg.Namespace == g.Namespace) {
			owners = append(owners, dg.Rule)
		}
	}
	r := g.Rule
	covered := func(sub rbacv1.PolicyRule) bool {
		ok, _ := validation.Covers(owners, []rbacv1.PolicyRule{sub})
		return ok
	}
	var out []rbacv1.PolicyRule
	// Per API group: resources by the verbs no declared rule covers.
	for _, group := range r.APIGroups {
		var order []string
		byVerbs := map[string][]string{}
		for _, res := range r.Resources {
			var verbs []string
			for _, v := range r.Verbs {
				if !covered(rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: r.ResourceNames}) {
					verbs = append(verbs, v)
				}
			}
			if len(verbs) == 0 {
				continue
			}
			k := strings.Join(verbs, ",")
			if _, ok := byVerbs[k]; !ok {
				order = append(order, k)
			}
			byVerbs[k] = append(byVerbs[k], res)
		}
		for _, k := range order {
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: byVerbs[k], Verbs: strings.Split(k, ","), ResourceNames: r.ResourceNames})
		}
	}
	for _, url := range r.NonResourceURLs {
		var verbs []string
		for _, v := range r.Verbs {
			if !covered(rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: []string{v}}) {
				verbs = append(verbs, v)
			}
		}
		if len(verbs) > 0 {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: verbs})
		}
	}
	return out
}

// Record is what the rbac check keeps in its report folder (rbac.json) and
// report.html reads back: the distinct requests the operator made, the
// rules its bindings grant, the rules the profile declares (nil when it
// declares none) and the check's diff.
type Record struct {
	Uses     []Use   `json:"uses"`
	Grants   []Grant `json:"grants"`
	Declared []Grant `json:"declared"`
	Diff     Diff    `json:"diff"`
}
