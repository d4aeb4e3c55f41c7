package profile

// Expectation is the intended verdict of a known-bad operator variant or of
// a run the suite must not judge.
type Expectation struct {
	// Check is the label of the check that must fail (or be incomplete).
	Check string `json:"check"`
	// Reason is a substring the failure (or incomplete) reason must contain.
	Reason string `json:"reason"`
	// State is the check's expected state: "failed" (the default, exit 1)
	// or "incomplete" (exit 2: the suite could not observe what it judges).
	State string `json:"state,omitempty"`
	// AuditLog "unreadable" makes selftest give the run an audit log path
	// that cannot be read (only the rbac check reads it).
	AuditLog string `json:"auditLog,omitempty"`
}

// Expected selftest states and audit-log modes.
const (
	ExpectFailed       = "failed"
	ExpectIncomplete   = "incomplete"
	AuditLogUnreadable = "unreadable"
)

// WantState is the expected state, "failed" when unset.
func (x *Expectation) WantState() string {
	if x.State == "" {
		return ExpectFailed
	}
	return x.State
}
