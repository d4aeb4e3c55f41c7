package specs

import (
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// RBACSpec derives the rules the operator's ServiceAccount used from the
// API-server audit log over the run, diffs them against its bindings and
// writes the minimal Role to the report dir.
func RBACSpec(ctx SpecContext, s *Suite) {
	e := s.Env
	if e.Opts.AuditLog == "" {
		Skip("no --audit-log given: the API server's audit log is needed to see what the operator used")
	}
	f, err := os.Open(e.Opts.AuditLog)
	Expect(err).NotTo(HaveOccurred(), "open the audit log")
	defer func() { _ = f.Close() }()
	uses, err := rbac.DeriveUses(f, rbac.Username(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount), s.Started)
	Expect(err).NotTo(HaveOccurred())
	Expect(uses).NotTo(BeEmpty(), "the audit log has no request by %s since the run started: is auditing on?", e.Profile.Operator.ServiceAccount)
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
