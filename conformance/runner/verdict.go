package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

// judgeSpecs turns Ginkgo's spec reports and what the specs recorded into
// the checks' states, then judges the run.
func judgeSpecs(rep *report.Report, rec *report.Recorder, gr types.Report, sel Selection, required []string, setupFailed bool) {
	byLabel := map[string]types.SpecReport{}
	for _, sr := range gr.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			if sr.State.Is(types.SpecStateFailureStates) {
				rep.SuiteFailures = append(rep.SuiteFailures, fmt.Sprintf("%s: %s", sr.LeafNodeType, sr.Failure.Message))
			}
			continue
		}
		for _, l := range sr.Labels() {
			byLabel[l] = sr
		}
		if setupFailed && sr.Failure.FailureNodeType == types.NodeTypeBeforeAll && rep.SetupFailure == "" {
			rep.SetupFailure = sr.Failure.Message
		}
	}
	if setupFailed && rep.SetupFailure == "" {
		rep.SetupFailure = "could not install or start the operator"
	}
	rep.SuiteFailures = append(rep.SuiteFailures, gr.SpecialSuiteFailureReasons...)
	for _, name := range profile.CheckLabels {
		c := rec.Check(name)
		sr, ran := byLabel[name]
		c.Required = slices.Contains(required, name)
		c.Duration = report.Ms(sr.RunTime)
		if ran {
			c.Started = sr.StartTime
		}
		v := checkState(c, sr, ran, sel.Why(name), setupFailed)
		c.State, c.Failure, c.Incomplete, c.Skipped = v.State, v.Failure, v.Incomplete, v.Skipped
		if v.Note != "" {
			c.Notes = append(c.Notes, v.Note)
		}
	}
	rep.Checks = rec.Checks(profile.CheckLabels)
	rep.Judge()
}

// checkVerdict is one check's state and its reasons; Note is a note to
// add to the check.
type checkVerdict struct {
	State                              report.State
	Failure, Incomplete, Skipped, Note string
}

// checkState decides one check's state from its spec's outcome and what the
// spec recorded (c.State is Incomplete or NotClaimed when a spec said so);
// notSelected is why the run did not select it, "" when it did.
// A check only passes when its spec passed and nothing marked it
// incomplete. It reads c only, so the runner can say a check's verdict as
// soon as its spec ends and judge it again at the end of the run.
func checkState(c *report.Check, sr types.SpecReport, ran bool, notSelected string, setupFailed bool) checkVerdict {
	marked, markedWhy := c.State, c.Incomplete
	msg := sr.Failure.Message
	switch {
	case notSelected != "":
		return checkVerdict{State: report.NotSelected, Skipped: notSelected}
	case !ran:
		return checkVerdict{State: report.Incomplete, Incomplete: "did not run: no spec carries this label"}
	case sr.State == types.SpecStatePassed && marked == report.Incomplete:
		// Incomplete was called but the spec went on (a recovered Fail):
		// what was not observed is still not observed.
		return checkVerdict{State: report.Incomplete, Incomplete: markedWhy}
	case sr.State == types.SpecStatePassed:
		return checkVerdict{State: report.Passed}
	case sr.State == types.SpecStateSkipped && marked == report.NotClaimed:
		return checkVerdict{State: report.NotClaimed, Skipped: c.Skipped}
	case sr.State == types.SpecStateSkipped && setupFailed:
		return checkVerdict{State: report.Incomplete, Incomplete: "did not run: setup failed"}
	case sr.State == types.SpecStateSkipped && msg == "":
		// Selected, but Ginkgo never ran it: interrupted or --timeout.
		return checkVerdict{State: report.Incomplete, Incomplete: "did not run: the run was interrupted or reached --timeout"}
	case sr.State == types.SpecStateSkipped && strings.HasPrefix(msg, "Spec skipped because"):
		return checkVerdict{State: report.Incomplete, Incomplete: "did not run: " + msg}
	case sr.State == types.SpecStateSkipped:
		// Skip() by the spec itself, on purpose (e.g. --skip-cleanup).
		return checkVerdict{State: report.Skipped, Skipped: msg}
	case sr.State == types.SpecStatePending:
		return checkVerdict{State: report.Skipped, Skipped: "pending"}
	case setupFailed && sr.Failure.FailureNodeType == types.NodeTypeBeforeAll:
		return checkVerdict{State: report.Incomplete, Incomplete: "setup failed: " + msg}
	case sr.State.Is(types.SpecStateInterrupted | types.SpecStateAborted):
		return checkVerdict{State: report.Incomplete, Incomplete: "interrupted: " + msg}
	case marked == report.Incomplete && specs.OnlyIncomplete(sr):
		return checkVerdict{State: report.Incomplete, Incomplete: markedWhy}
	}
	v := checkVerdict{State: report.Failed, Failure: msg}
	if sr.Failure.FailureNodeType != types.NodeTypeIt {
		v.Failure = fmt.Sprintf("%s in %s", msg, sr.Failure.FailureNodeType)
	}
	if marked == report.Incomplete {
		// A real failure outweighs what could not be observed; keep both.
		v.Note = "also could not observe: " + markedWhy
	}
	return v
}

// floorOf is the floor's measurements (specs.FloorSpec) with how its spec
// ended: a floor that failed halfway keeps the timings it took.
func floorOf(rec *report.Recorder, gr types.Report) *report.Check {
	c := rec.Check(specs.FloorCheck)
	c.State, c.Skipped = report.Skipped, "the floor did not run"
	for _, sr := range gr.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt || !slices.Contains(sr.Labels(), specs.FloorCheck) {
			continue
		}
		c.Started, c.Duration, c.Skipped = sr.StartTime, report.Ms(sr.RunTime), ""
		c.State = report.Passed
		if sr.State.Is(types.SpecStateFailureStates) {
			c.State, c.Failure = report.Failed, sr.Failure.Message
		}
	}
	return c
}
