package specs

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/report"
)

// IncompletePrefix starts the Ginkgo failure message of a spec ended by
// Incomplete; the runner requires it before reporting the check incomplete.
const IncompletePrefix = "INCOMPLETE: "

// Incomplete ends the spec because the suite could not observe what check
// judges (an input is missing or unreadable, the observation came back
// empty). It is neither a pass nor a fail: the reason goes to the report and
// the run ends INCOMPLETE (exit 2) unless another check failed. Call it
// from the spec's goroutine (or one that defers GinkgoRecover).
func Incomplete(rep *report.Recorder, check, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	rep.Incomplete(check, "%s", msg)
	Fail(IncompletePrefix+msg, 1)
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
