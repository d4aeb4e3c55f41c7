package specs

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// IncompleteEntry names the Ginkgo report entry Incomplete adds to its
// spec, its value the reason: the runner reports a failed check
// INCOMPLETE only when every failure of its spec is such a reason
// (OnlyIncomplete), so the verdict travels in the spec's report, not in
// the words of a failure message.
const IncompleteEntry = "etcdproof/incomplete"

// Incomplete ends the spec because the suite could not observe what check
// judges (an input is missing or unreadable, the observation came back
// empty). It is neither a pass nor a fail: the reason goes to the report and
// the run ends INCOMPLETE (exit 2) unless another check failed. Call it
// from the spec's goroutine (or one that defers GinkgoRecover).
func Incomplete(rep *report.Recorder, check, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	rep.Incomplete(check, "%s", msg)
	AddReportEntry(IncompleteEntry, msg, ReportEntryVisibilityNever)
	Fail(msg, 1)
}

// OnlyIncomplete: every failure of the spec is a reason Incomplete gave.
func OnlyIncomplete(sr types.SpecReport) bool {
	reasons := map[string]bool{}
	for _, e := range sr.ReportEntries {
		if e.Name == IncompleteEntry {
			reasons[e.StringRepresentation()] = true
		}
	}
	if !reasons[sr.Failure.Message] {
		return false
	}
	for _, f := range sr.AdditionalFailures {
		if !reasons[f.Failure.Message] {
			return false
		}
	}
	return true
}

// unobserved records that check could not observe one thing it judges and
// lets the spec go on: every later step is still judged, and a failure
// among them makes the check FAIL (the runner notes what was not observed
// beside it); with none, the check ends INCOMPLETE. Incomplete, which ends
// the spec, is for what the rest of the check cannot do without.
func unobserved(rep *report.Recorder, check, format string, args ...any) {
	rep.Incomplete(check, format, args...)
}

// notClaimed ends the spec of a capability the profile does not claim: the
// check is reported as not claimed, which keeps a run that requires it
// from passing.
func notClaimed(rep *report.Recorder, check, capability string) {
	reason := "profile does not claim " + capability
	rep.NotClaimed(check, reason)
	Skip(reason, 1)
}
