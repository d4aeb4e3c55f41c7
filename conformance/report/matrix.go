package report

import (
	"fmt"
	"sort"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Matrix renders several runs side by side: one column per run (profile on
// a Kubernetes version), one row per check, then every check that did not
// pass with its reason (failed, INCOMPLETE, not claimed, ...). It is what docs/results.md is made of.
func Matrix(reports []*Report, checkOrder []string) string {
	reps := append([]*Report(nil), reports...)
	sort.SliceStable(reps, func(i, j int) bool {
		if ki, kj := kubeMinor(reps[i]), kubeMinor(reps[j]); ki != kj {
			return ki > kj
		}
		return reps[i].Profile < reps[j].Profile
	})
	var b strings.Builder
	b.WriteString("| check |")
	for _, r := range reps {
		fmt.Fprintf(&b, " %s |", column(r))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(reps)))
	b.WriteString("\n")
	for _, name := range checkOrder {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range reps {
			fmt.Fprintf(&b, " %s |", cell(find(r, name)))
		}
		b.WriteString("\n")
	}
	b.WriteString("| **verdict** |")
	for _, r := range reps {
		fmt.Fprintf(&b, " **%s** (%d/%d) |", r.Verdict, r.Counts.RequiredPassed, r.Counts.Required)
	}
	b.WriteString("\n\n")
	for _, r := range reps {
		fmt.Fprintf(&b, "### %s\n\n", column(r))
		e := r.Environment
		fmt.Fprintf(&b, "Kubernetes %s, etcd %s, operator %s, suite %s; run %s, %.0f s.",
			orDash(e.Kubernetes), orDash(strings.Join(e.Etcd, " → ")), orDash(e.Operator), orDash(e.Suite),
			r.Started.UTC().Format("2006-01-02"), float64(r.Duration)/1000)
		if u := r.Operator; u != nil && u.Samples > 0 {
			fmt.Fprintf(&b, " Operator peak RSS %.1f MiB.", MiB(u.PeakRSSBytes))
		}
		b.WriteString("\n\n")
		wrote := false
		for _, name := range checkOrder {
			c := find(r, name)
			if c == nil {
				continue
			}
			if reason := c.Reason(); reason != "" {
				fmt.Fprintf(&b, "- **%s %s**: %s\n", name, c.State.Label(), oneLine(reason))
				wrote = true
			}
			for _, n := range c.Notes {
				// Every note explains a failure; workarounds qualify a pass too.
				if c.State == Failed || c.State == Incomplete || strings.HasPrefix(n, "profile workaround") {
					fmt.Fprintf(&b, "- **%s %s**, note: %s\n", name, c.State.Label(), oneLine(n))
					wrote = true
				}
			}
		}
		if !wrote {
			b.WriteString("- every check passed\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func column(r *Report) string {
	k := r.Environment.Kubernetes
	if k == "" {
		k = "unknown Kubernetes"
	}
	return fmt.Sprintf("%s on %s", r.Profile, k)
}

func cell(c *Check) string {
	if c == nil {
		return "not run"
	}
	switch c.State {
	case Passed:
		return fmt.Sprintf("pass (%.1f s)", float64(c.Duration)/1000)
	case Failed:
		return "**fail**"
	case Incomplete:
		return "**INCOMPLETE**"
	default:
		return c.State.Label()
	}
}

func find(r *Report, name string) *Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// kubeMinor orders columns newest Kubernetes first ("v1.34.4" → 34).
func kubeMinor(r *Report) int {
	v, err := utilversion.ParseGeneric(r.Environment.Kubernetes)
	if err != nil {
		return -1
	}
	return int(v.Major())*1000 + int(v.Minor())
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
