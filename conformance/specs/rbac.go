package specs

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/rbac"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// RBACSpecInput is what RBACSpec needs.
type RBACSpecInput struct {
	// Env reaches the cluster and the audit log, and holds the profile.
	Env *framework.Env
	// Report records the check's notes.
	Report *report.Recorder
	// Started is when the run started: older audit events are not this
	// run's.
	Started time.Time
}

// RBACSpec derives the rules the operator's ServiceAccount used from the
// API-server audit log over the run, diffs them against its bindings and
// writes the minimal Role to the report dir. A profile that installs the
// operator with a grant it did not write declares the operator's own rules
// (rbac.declaredRole): those are judged instead, and every use must still
// have been granted by the install. Without a readable audit log holding the
// operator's requests it cannot judge anything: the check is then
// incomplete, never skipped or passed.
func RBACSpec(ctx SpecContext, inputGetter func() RBACSpecInput) {
	const check = "rbac"
	input := inputGetter()
	Expect(input.Env).NotTo(BeNil(), "Invalid argument. input.Env can't be nil when calling RBACSpec")
	Expect(input.Report).NotTo(BeNil(), "Invalid argument. input.Report can't be nil when calling RBACSpec")
	Expect(input.Started.IsZero()).To(BeFalse(), "Invalid argument. input.Started can't be zero when calling RBACSpec")
	e, rep := input.Env, input.Report

	path := e.Opts.AuditLog
	if path == "" {
		Incomplete(rep, check, "no --audit-log given: the API server's audit log is needed to see what the operator used")
	}
	user := rbac.Username(e.Profile.Operator.Namespace, e.Profile.Operator.ServiceAccount)
	uses, err := e.ReadAuditUses(user, input.Started)
	if err != nil {
		Incomplete(rep, check, "cannot read the audit log %s: %v", path, err)
	}
	if len(uses) == 0 {
		Incomplete(rep, check, "the audit log %s has no request by %s since the run started (%s): is auditing on, and is it this cluster's API server's log?",
			path, user, input.Started.UTC().Format(time.RFC3339))
	}
	grants, err := e.Grants(ctx)
	Expect(err).NotTo(HaveOccurred())
	scope := rbac.Scope{OperatorNamespace: e.Profile.Operator.Namespace, ManyNamespaces: e.Profile.Cluster.Namespace != "operator"}
	var diff rbac.Diff
	var declared []rbac.Grant
	if e.Profile.RBAC.DeclaredRole == "" {
		diff = rbac.Compare(uses, grants, scope)
	} else {
		declared, err = e.ReadDeclaredRole()
		if err != nil {
			Fail("rbac.declaredRole: " + err.Error())
		}
		diff = rbac.CompareDeclared(uses, grants, declared, scope)
	}

	roles, clusterRole := rbac.MinimalRoles(e.Profile.Operator.ServiceAccount+"-minimal", uses)
	Expect(e.WriteJSON(rbac.Record{Uses: uses, Grants: grants, Declared: declared, Diff: diff}, check, "rbac.json")).To(Succeed())
	var docs []any
	for _, r := range roles {
		docs = append(docs, r)
	}
	if clusterRole != nil {
		docs = append(docs, clusterRole)
	}
	Expect(e.WriteYAML(map[string]any{"apiVersion": "v1", "kind": "List", "items": docs}, check, "minimal-role.yaml")).To(Succeed())
	unused := "unused grant"
	if declared != nil {
		unused = "unused declared grant"
		rep.Note(check, "judged the declared rules (%s) in place of the installed grant", e.Profile.RBAC.DeclaredRole)
	}
	for _, u := range diff.Unused {
		rep.Note(check, "%s: %s", unused, u)
	}
	for _, x := range diff.Excess {
		rep.Note(check, "%s", x)
	}
	rep.Note(check, "%d distinct requests observed; minimal role written to rbac/minimal-role.yaml", len(uses))
	var msgs []string
	for _, f := range diff.Findings {
		msgs = append(msgs, f.Message)
	}
	if len(msgs) > 0 {
		Fail("RBAC findings:\n" + strings.Join(msgs, "\n"))
	}
}
