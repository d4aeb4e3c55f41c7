package framework

import (
	"time"

	"github.com/etcdproof/etcdproof/conformance/audit"
	"github.com/etcdproof/etcdproof/conformance/rbac"
)

// The run's files beyond the cluster's API: the API server's audit log
// (Options.AuditLog) and the profile's declared rules. Specs judge what is
// read here and never open a file themselves.

// ReadAuditUses returns the distinct requests user made since a time, from
// the run's audit log (see rbac.DeriveUses).
func (e *Env) ReadAuditUses(user string, since time.Time) ([]rbac.Use, error) {
	return rbac.DeriveUses(e.Opts.AuditLog, user, since)
}

// ReadAuditCreations returns every creation since a time in the run's audit
// log (see audit.Creations).
func (e *Env) ReadAuditCreations(since time.Time) ([]audit.Creation, audit.Stats, error) {
	return audit.Creations(e.Opts.AuditLog, since)
}

// ReadDeclaredRole reads the operator's own rules the profile declares
// (rbac.declaredRole), afresh: the profile was checked at load, the files
// may have changed since.
func (e *Env) ReadDeclaredRole() ([]rbac.Grant, error) {
	return rbac.ReadDeclared(e.Profile.Path(e.Profile.RBAC.DeclaredRole), e.Profile.Operator.Namespace)
}
