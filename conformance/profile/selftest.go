package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
)

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

// Expectations is a profile's selftest section: the checks one known-bad
// variant must fail, each proven by a run of its own limited to that
// check. In YAML it is one expectation (a mapping) or a list of them:
//
//	selftest:
//	  check: upgrade
//	  reason: "member unreachable"
//
//	selftest:
//	  - check: upgrade
//	    reason: "member unreachable"
//	  - check: operator-crash
//	    reason: "member pods: 0 of"
type Expectations []Expectation

// UnmarshalJSON reads one expectation or a list of them, strictly: an
// unknown field is an error, as everywhere else in a profile.
func (xs *Expectations) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	const want = "selftest: want one expectation {check, reason[, state, auditLog]} or a list of them"
	var err error
	switch {
	case len(b) > 0 && b[0] == '[':
		list := []Expectation{}
		if err = decodeStrict(b, &list); err == nil {
			*xs = list
			return nil
		}
	case len(b) > 0 && b[0] == '{':
		var one Expectation
		if err = decodeStrict(b, &one); err == nil {
			*xs = Expectations{one}
			return nil
		}
	default:
		return fmt.Errorf("%s, got %s", want, b)
	}
	return fmt.Errorf("%s: %w", want, err)
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
