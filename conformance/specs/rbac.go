package specs

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// RBACSpec derives the rules the operator's ServiceAccount used from the
// API-server audit log over the run, diffs them against its bindings and
// writes the minimal Role to the report dir. A profile that installs the
// operator with a grant it did not write declares the operator's own rules
// (rbac.declaredRole): those are judged instead, and every use must still
// have been granted by the install. Without a readable audit log holding the
// operator's requests it cannot judge anything: the check is then
// incomplete, never skipped or passed.
func RBACSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	path := e.Opts.AuditLog
	if path == "" {
		Incomplete(s, "rbac", "no --audit-log given: the API server's audit log is needed to see what the operator used")
	}
	user := rbac.Username(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount)
	uses, err := rbac.DeriveUses(path, user, s.Started)
	if err != nil {
		Incomplete(s, "rbac", "cannot read the audit log %s: %v", path, err)
	}
	if len(uses) == 0 {
		Incomplete(s, "rbac", "the audit log %s has no request by %s since the run started (%s): is auditing on, and is it this cluster's API server's log?",
			path, user, s.Started.UTC().Format(time.RFC3339))
	}
	grants, err := e.Grants(ctx)
	Expect(err).NotTo(HaveOccurred())
	scope := rbac.Scope{OperatorNamespace: e.Profile.Operator.Namespace, ManyNamespaces: e.Profile.Cluster.Namespace != "operator"}
	var diff rbac.Diff
	var declared []rbac.Grant
	if d := e.Profile.RBAC.DeclaredRole; d == "" {
		diff = rbac.Compare(uses, grants, scope)
	} else {
		// Read again: the profile was checked at load, the files may have changed since.
		declared, err = rbac.ReadDeclared(e.Profile.Path(d), e.Profile.Operator.Namespace)
		if err != nil {
			Fail("rbac.declaredRole: " + err.Error())
		}
		diff = rbac.CompareDeclared(uses, grants, declared, scope)
	}

	roles, clusterRole := rbac.MinimalRoles(e.Profile.Operator.ServiceAccount+"-minimal", uses)
	Expect(e.WriteJSON(map[string]any{"uses": uses, "grants": grants, "declared": declared, "diff": diff}, "rbac", "rbac.json")).To(Succeed())
	var docs []any
	for _, r := range roles {
		docs = append(docs, r)
	}
	if clusterRole != nil {
		docs = append(docs, clusterRole)
	}
	Expect(e.WriteYAML(map[string]any{"apiVersion": "v1", "kind": "List", "items": docs}, "rbac", "minimal-role.yaml")).To(Succeed())
	unused := "unused grant"
	if declared != nil {
		unused = "unused declared grant"
		s.Report.Note("rbac", "judged the declared rules (%s) in place of the installed grant", e.Profile.RBAC.DeclaredRole)
	}
	for _, u := range diff.Unused {
		s.Report.Note("rbac", "%s: %s", unused, u)
	}
	for _, x := range diff.Excess {
		s.Report.Note("rbac", "%s", x)
	}
	s.Report.Note("rbac", "%d distinct requests observed; minimal role written to rbac/minimal-role.yaml", len(uses))
	var msgs []string
	for _, f := range diff.Findings {
		msgs = append(msgs, f.Message)
	}
	if len(msgs) > 0 {
		Fail("RBAC findings:\n" + strings.Join(msgs, "\n"))
	}
}
