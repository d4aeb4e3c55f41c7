package report

import (
	"fmt"
	"strings"
)

// State is how one check ended. Only Passed counts towards a pass; every
// other state names why the check did not pass.
type State string

const (
	// Passed: the check ran and the operator met every requirement.
	Passed State = "passed"
	// Failed: the check ran and the operator broke a requirement.
	Failed State = "failed"
	// Incomplete: the suite could not observe what the check judges (no
	// audit log, setup failed, run interrupted); says nothing either way.
	Incomplete State = "incomplete"
	// NotClaimed: the profile does not claim the capability the check tests.
	NotClaimed State = "notClaimed"
	// NotSelected: left out by --label-filter, or because the cluster has
	// too few nodes for the check (runner.Select).
	NotSelected State = "notSelected"
	// Skipped: left out on purpose for another reason (e.g. --skip-cleanup).
	Skipped State = "skipped"
)

// States lists every state, in the order reports count them.
var States = []State{Passed, Failed, Incomplete, NotClaimed, NotSelected, Skipped}

// Label is the state as people read it in report.md and the results matrix.
func (s State) Label() string {
	switch s {
	case Incomplete:
		return "INCOMPLETE"
	case NotClaimed:
		return "not claimed"
	case NotSelected:
		return "not selected"
	case "":
		return "not run"
	}
	return string(s)
}

// Verdict is the run's outcome.
type Verdict string

const (
	// VerdictPass: every required check passed; none failed or was incomplete.
	VerdictPass Verdict = "PASS"
	// VerdictFail: at least one check failed.
	VerdictFail Verdict = "FAIL"
	// VerdictIncomplete: nothing failed, but the run cannot certify the
	// operator: a check was incomplete or a required check did not run.
	VerdictIncomplete Verdict = "INCOMPLETE"
)

// Counts are how many checks ended in each state, and how many of the
// required ones passed.
type Counts struct {
	Required       int `json:"required"`
	RequiredPassed int `json:"requiredPassed"`
	Passed         int `json:"passed"`
	Failed         int `json:"failed"`
	Incomplete     int `json:"incomplete"`
	NotClaimed     int `json:"notClaimed"`
	NotSelected    int `json:"notSelected"`
	Skipped        int `json:"skipped"`
}

func (c *Counts) add(s State) {
	switch s {
	case Passed:
		c.Passed++
	case Failed:
		c.Failed++
	case Incomplete:
		c.Incomplete++
	case NotClaimed:
		c.NotClaimed++
	case NotSelected:
		c.NotSelected++
	case Skipped:
		c.Skipped++
	}
}

// Judge sets Verdict, VerdictLine, Counts and Passed from the checks'
// states and Required flags, SetupFailure and SuiteFailures:
//   - FAIL when any check failed;
//   - else INCOMPLETE when setup or the suite itself failed, any check is
//     incomplete, a required check did not pass, or no check was required;
//   - else PASS.
func (rep *Report) Judge() {
	var c Counts
	var failed, why []string
	if rep.SetupFailure != "" {
		why = append(why, "setup failed: "+brief(rep.SetupFailure))
	}
	for _, f := range rep.SuiteFailures {
		why = append(why, "the suite: "+brief(f))
	}
	for _, ch := range rep.Checks {
		c.add(ch.State)
		if ch.Required {
			c.Required++
			if ch.State == Passed {
				c.RequiredPassed++
			}
		}
		switch {
		case ch.State == Failed:
			failed = append(failed, ch.Name)
		case ch.State == Incomplete && rep.SetupFailure == "":
			why = append(why, ch.Name+" could not run: "+brief(ch.Reason()))
		case ch.State == Incomplete:
			// Every check shares the setup failure named above.
		case ch.Required && ch.State == NotClaimed:
			why = append(why, ch.Name+" is required but the profile does not claim it")
		case ch.Required && ch.State == NotSelected:
			why = append(why, ch.Name+" is required but --label-filter left it out")
		case ch.Required && ch.State != Passed:
			w := fmt.Sprintf("%s is required but %s", ch.Name, ch.State.Label())
			if r := ch.Reason(); r != "" {
				w += ": " + brief(r)
			}
			why = append(why, w)
		}
	}
	if c.Required == 0 {
		why = append(why, "no check was required: nothing was certified")
	}
	rep.Counts = c
	switch {
	case len(failed) > 0:
		rep.Verdict = VerdictFail
		why = append([]string{strings.Join(failed, ", ") + " failed"}, why...)
	case len(why) > 0:
		rep.Verdict = VerdictIncomplete
	default:
		rep.Verdict = VerdictPass
	}
	rep.Passed = rep.Verdict == VerdictPass
	rep.VerdictLine = fmt.Sprintf("%s (%d/%d", rep.Verdict, c.RequiredPassed, c.Required)
	if len(why) > 0 {
		rep.VerdictLine += ": " + strings.Join(why, "; ")
	}
	rep.VerdictLine += ")"
}

// Reason is why the check ended as it did: the failure, the incomplete
// reason or why it did not run; empty for a pass.
func (c *Check) Reason() string {
	switch c.State {
	case Failed:
		return c.Failure
	case Incomplete:
		return c.Incomplete
	case NotClaimed, NotSelected, Skipped:
		return c.Skipped
	}
	return ""
}

// brief keeps a reason to one line of at most 200 characters for the
// verdict line; the report keeps it whole.
func brief(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
