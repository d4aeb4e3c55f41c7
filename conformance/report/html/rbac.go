package html

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// The rbac check's files in the report dir (specs.RBACSpec writes them).
const (
	rbacRecordFile  = "rbac/rbac.json"
	minimalRoleFile = "rbac/minimal-role.yaml"
)

// rbacView is the rbac check's section: what the operator was seen to
// request, what it holds beyond that, as the check judged it, and the
// minimal Role derived from the requests. Record and Role are the files
// read; Problems name a file missing or unreadable.
type rbacView struct {
	Record, Role string
	Problems     []string
	// Requests are the observed requests, one row per namespace and
	// resource, its verbs merged.
	Requests []requestRow
	// Findings failed the check; Unused are grants no request needed
	// (declared rules when Declared); Excess is what the installed grant
	// allows beyond the declared rules.
	Findings, Unused, Excess []string
	Declared                 bool
	// Grants are the rules the bindings grant (the declared ones when
	// Declared), for reference.
	Grants      []grantRow
	MinimalRole string
}

type requestRow struct{ Scope, Group, Resource, Verbs string }

type grantRow struct{ Scope, Source, Rule string }

func newRBACView(dir string) *rbacView {
	v := &rbacView{}
	var r rbac.Record
	if problem := readCheckJSON(dir, rbacRecordFile, &r); problem != "" {
		v.Problems = append(v.Problems, problem)
	} else {
		v.Record = rbacRecordFile
		v.fill(r)
	}
	if b, problem := readCheckFile(dir, minimalRoleFile); problem != "" {
		v.Problems = append(v.Problems, problem)
	} else {
		v.Role, v.MinimalRole = minimalRoleFile, string(b)
	}
	return v
}

func (v *rbacView) fill(r rbac.Record) {
	v.Requests = requestRows(r.Uses)
	for _, f := range r.Diff.Findings {
		v.Findings = append(v.Findings, f.Message)
	}
	v.Unused, v.Excess, v.Declared = r.Diff.Unused, r.Diff.Excess, r.Declared != nil
	grants := r.Grants
	if v.Declared {
		grants = r.Declared
	}
	for _, g := range grants {
		v.Grants = append(v.Grants, grantRow{Scope: scopeName(g.Namespace), Source: g.Source, Rule: describeRule(g.Rule)})
	}
}

// requestRows merges the uses of one resource in one namespace into a
// row: cluster-wide ones first, then by namespace, group and resource.
func requestRows(uses []rbac.Use) []requestRow {
	type key struct{ ns, group, resource string }
	verbs := map[key][]string{}
	for _, u := range uses {
		k := key{u.Namespace, u.APIGroup, u.Resource}
		if !slices.Contains(verbs[k], u.Verb) {
			verbs[k] = append(verbs[k], u.Verb)
		}
	}
	keys := make([]key, 0, len(verbs))
	for k := range verbs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource))
	})
	rows := make([]requestRow, 0, len(keys))
	for _, k := range keys {
		vs := verbs[k]
		slices.Sort(vs)
		rows = append(rows, requestRow{Scope: scopeName(k.ns), Group: groupName(k.group), Resource: k.resource, Verbs: strings.Join(vs, ", ")})
	}
	return rows
}

func scopeName(namespace string) string {
	if namespace == "" {
		return "cluster-wide"
	}
	return namespace
}

func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// describeRule is a rule on one line: verbs on resources (groups), with
// resource names and non-resource URLs when it has them.
func describeRule(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.Resources) > 0 || len(r.APIGroups) > 0 {
		groups := make([]string, len(r.APIGroups))
		for i, g := range r.APIGroups {
			groups[i] = groupName(g)
		}
		parts = append(parts, fmt.Sprintf("%s on %s (%s)", strings.Join(r.Verbs, ", "), strings.Join(r.Resources, ", "), strings.Join(groups, ", ")))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, "named "+strings.Join(r.ResourceNames, ", "))
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, fmt.Sprintf("%s on %s", strings.Join(r.Verbs, ", "), strings.Join(r.NonResourceURLs, ", ")))
	}
	return strings.Join(parts, ", ")
}
