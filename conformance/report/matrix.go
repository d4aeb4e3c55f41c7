package report

import (
	"fmt"
	"strings"
)

// Matrix renders several runs side by side: one column per run (profile on
// a Kubernetes version), one row per check, then every check that did not
// pass with its reason (failed, INCOMPLETE, not claimed, ...). It is what docs/results.md is made of.
func Matrix(reports []*Report, checkOrder []string) string {
	reps := Columns(reports)
	var b strings.Builder
	b.WriteString("| check |")
	for _, r := range reps {
		fmt.Fprintf(&b, " %s |", ColumnName(r))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(reps)))
	b.WriteString("\n")
	for _, name := range checkOrder {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range reps {
			label, attention := CellLabel(r.CheckNamed(name))
			if attention {
				label = "**" + label + "**"
			}
			fmt.Fprintf(&b, " %s |", label)
		}
		b.WriteString("\n")
	}
	b.WriteString("| **verdict** |")
	for _, r := range reps {
		fmt.Fprintf(&b, " **%s** (%d/%d) |", r.Verdict, r.Counts.RequiredPassed, r.Counts.Required)
	}
	b.WriteString("\n| **capability level** |")
	for _, r := range reps {
		fmt.Fprintf(&b, " %s |", capabilityCell(r))
	}
	b.WriteString("\n\n")
	for _, r := range reps {
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", ColumnName(r), RunSummary(r))
		remarks := Remarks(r, checkOrder)
		for _, rm := range remarks {
			if rm.Note {
				fmt.Fprintf(&b, "- **%s %s**, note: %s\n", rm.Check, rm.State.Label(), oneLine(rm.Text))
			} else {
				fmt.Fprintf(&b, "- **%s %s**: %s\n", rm.Check, rm.State.Label(), oneLine(rm.Text))
			}
		}
		if len(remarks) == 0 {
			b.WriteString("- every check passed\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TrimDir rewrites the paths inside a report that point into dir (its
// report folder) as relative ones, so a rendered comparison names files the
// same way on every machine.
func (rep *Report) TrimDir(dir string) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	trim := func(s string) string { return strings.ReplaceAll(s, prefix, "") }
	rep.SetupFailure, rep.VerdictLine = trim(rep.SetupFailure), trim(rep.VerdictLine)
	for i := range rep.SuiteFailures {
		rep.SuiteFailures[i] = trim(rep.SuiteFailures[i])
	}
	for _, c := range rep.Checks {
		c.Failure, c.Incomplete, c.Skipped = trim(c.Failure), trim(c.Incomplete), trim(c.Skipped)
		for i := range c.Notes {
			c.Notes[i] = trim(c.Notes[i])
		}
		for _, t := range c.Traffic {
			t.History, t.Visualization = trim(t.History), trim(t.Visualization)
			for i := range t.Failures {
				t.Failures[i] = trim(t.Failures[i])
			}
		}
	}
}

// capabilityCell is the Operator Framework level a column proved, from
// its (possibly merged) checks, beside the one its CSV declares.
func capabilityCell(r *Report) string {
	declared := ""
	if r.Capability != nil {
		declared = r.Capability.Declared
	}
	r.ProveCapability(declared)
	cell := "none proven"
	if cl := r.Capability; cl.Level > 0 {
		cell = fmt.Sprintf("%d %s", cl.Level, cl.Name)
	}
	if declared != "" {
		cell += fmt.Sprintf(" (declares %d %s)", LevelNamed(declared), declared)
	}
	return cell
}
