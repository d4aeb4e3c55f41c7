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
// writes the minimal Role to the report dir. Without a readable audit log
// holding the operator's requests it cannot judge anything: the check is
// then incomplete, never skipped or passed.
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
	diff := rbac.Compare(uses, grants, scope)

	roles, clusterRole := rbac.MinimalRoles(e.Profile.Operator.ServiceAccount+"-minimal", uses)
	Expect(e.WriteJSON(map[string]any{"uses": uses, "grants": grants, "diff": diff}, "rbac", "rbac.json")).To(Succeed())
	var docs []any
	for _, r := range roles {
		docs = append(docs, r)
	}
	if clusterRole != nil {
		docs = append(docs, clusterRole)
	}
	Expect(e.WriteYAML(map[string]any{"apiVersion": "v1", "kind": "List", "items": docs}, "rbac", "minimal-role.yaml")).To(Succeed())
	for _, u := range diff.Unused {
		s.Report.Note("rbac", "unused grant: %s", u)
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
