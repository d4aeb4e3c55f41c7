package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// The pieces of the results matrix that every rendering shares (Matrix's
// Markdown, the HTML page of package html): which column comes first,
// what a cell says, which reasons and notes are listed under a column. A
// rendering only formats them, so docs/results.md and docs/results.html
// cannot disagree.

// Columns orders runs as the results matrix shows them: newest
// Kubernetes first, then by profile. The caller's slice is left as it is.
func Columns(reports []*Report) []*Report {
	reps := slices.Clone(reports)
	sort.SliceStable(reps, func(i, j int) bool {
		if ki, kj := kubeMinor(reps[i]), kubeMinor(reps[j]); ki != kj {
			return ki > kj
		}
		return reps[i].Profile < reps[j].Profile
	})
	return reps
}

// ColumnName names a run's column: "reference on v1.34.4".
func ColumnName(r *Report) string {
	k := r.Environment.Kubernetes
	if k == "" {
		k = "unknown Kubernetes"
	}
	return fmt.Sprintf("%s on %s", r.Profile, k)
}

// CheckNamed is the run's check of that name, nil when the run has none.
func (rep *Report) CheckNamed(name string) *Check {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// CellLabel is what the matrix says of one check of a run ("pass (6.5 s)",
// "fail", "INCOMPLETE", "not claimed", "not run" for a nil check), and
// whether it calls for a reader's attention (failed or incomplete).
func CellLabel(c *Check) (label string, attention bool) {
	if c == nil {
		return "not run", false
	}
	switch c.State {
	case Passed:
		return fmt.Sprintf("pass (%.1f s)", float64(c.Duration)/1000), false
	case Failed:
		return "fail", true
	case Incomplete:
		return "INCOMPLETE", true
	default:
		return c.State.Label(), false
	}
}

// Remark is a line listed under a column of the matrix: why a check did
// not pass (Note false), or one of its notes (Note true).
type Remark struct {
	Check string
	State State
	Text  string
	Note  bool
}

// Remarks are a run's remarks in check order: each check's reason, then
// its notes when they explain a failure or an incomplete check, and the
// profile workarounds, which qualify a pass too. Text is whole; a
// rendering shortens it if it must.
func Remarks(r *Report, checkOrder []string) []Remark {
	var out []Remark
	for _, name := range checkOrder {
		c := r.CheckNamed(name)
		if c == nil {
			continue
		}
		if reason := c.Reason(); reason != "" {
			out = append(out, Remark{Check: name, State: c.State, Text: reason})
		}
		for _, n := range c.Notes {
			if c.State == Failed || c.State == Incomplete || strings.HasPrefix(n, "profile workaround") {
				out = append(out, Remark{Check: name, State: c.State, Text: n, Note: true})
			}
		}
	}
	return out
}

// RunSummary is the line under a column's heading: what was tested, when,
// and the operator's peak memory when it was sampled.
func RunSummary(r *Report) string {
	e := r.Environment
	s := fmt.Sprintf("Kubernetes %s, etcd %s, operator %s, suite %s; run %s, %.0f s.",
		orDash(e.Kubernetes), orDash(strings.Join(e.Etcd, " → ")), orDash(e.Operator), orDash(e.Suite),
		r.Started.UTC().Format("2006-01-02"), float64(r.Duration)/1000)
	if u := r.Operator; u != nil && u.Samples > 0 {
		s += fmt.Sprintf(" Operator peak RSS %.1f MiB.", MiB(u.PeakRSSBytes))
	}
	return s
}

// kubeMinor orders columns newest Kubernetes first ("v1.34.4" → 34).
func kubeMinor(r *Report) int {
	v, err := utilversion.ParseGeneric(r.Environment.Kubernetes)
	if err != nil {
		return -1
	}
	return int(v.Major())*1000 + int(v.Minor())
}
