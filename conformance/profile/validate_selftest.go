package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// validateSelftest checks the expectations of a known-bad profile, if any:
// each names a check the profile runs, once, and the reason to look for.
// A single expectation is named "selftest", one of a list "selftest[i]".
func (p *Profile) validateSelftest() []error {
	if p.Selftest == nil {
		return nil
	}
	if len(p.Selftest) == 0 {
		return []error{errors.New("  selftest: the list is empty: give at least one expectation {check, reason}, or leave selftest out")}
	}
	var errs []error
	for i, x := range p.Selftest {
		field := "selftest"
		if len(p.Selftest) > 1 {
			field = fmt.Sprintf("selftest[%d]", i)
		}
		if !slices.Contains(CheckLabels, x.Check) {
			errs = append(errs, fmt.Errorf("  %s.check: %q is not one of %s", field, x.Check, strings.Join(CheckLabels, ", ")))
		} else if capability, claimed := p.Capabilities.capabilityOf(x.Check); !claimed {
			errs = append(errs, fmt.Errorf("  %s.check: %s runs only when the profile claims capabilities.%s: without the claim it is reported not claimed, never failed",
				field, x.Check, capability))
		}
		if slices.ContainsFunc(p.Selftest[:i], func(o Expectation) bool { return o.Check == x.Check }) {
			errs = append(errs, fmt.Errorf("  %s.check: %s is listed twice: selftest runs the profile once per check, so give each check one expectation", field, x.Check))
		}
		errs = append(errs, required(field+".reason", x.Reason)...)
		if st := x.State; st != "" && st != ExpectFailed && st != ExpectIncomplete {
			errs = append(errs, fmt.Errorf("  %s.state: %q is not one of %q, %q", field, st, ExpectFailed, ExpectIncomplete))
		}
		switch x.AuditLog {
		case "":
		case AuditLogUnreadable:
			if x.Check != "rbac" {
				errs = append(errs, fmt.Errorf("  %s.auditLog: only the rbac check reads the audit log, and %s.check is %q", field, field, x.Check))
			}
		default:
			errs = append(errs, fmt.Errorf("  %s.auditLog: %q is not %q", field, x.AuditLog, AuditLogUnreadable))
		}
	}
	return errs
}
