package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

// Markdown renders the summary.
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# etcdproof: %s — %s\n\n", rep.Profile, rep.Verdict)
	fmt.Fprintf(&b, "**%s**\n\n", mdText(rep.VerdictLine))
	if rep.Capability != nil {
		fmt.Fprintf(&b, "%s\n\n", mdText(rep.Capability.Line()))
	}
	e := rep.Environment
	fmt.Fprintf(&b, "Kubernetes %s, kind %s, etcd %s, operator %s, suite %s. Run %s, %.0f s.\n\n",
		orDash(e.Kubernetes), orDash(e.Kind), orDash(strings.Join(e.Etcd, " → ")), orDash(e.Operator), orDash(e.Suite), rep.Started.UTC().Format(time.RFC3339), float64(rep.Duration)/1000)
	if u := rep.Operator; u != nil && u.Samples > 0 {
		fmt.Fprintf(&b, "Operator memory: peak RSS %.1f MiB, peak working set %.1f MiB (%d samples).\n\n",
			MiB(u.PeakRSSBytes), MiB(u.PeakWorkingSetBytes), u.Samples)
	}
	b.WriteString("| check | result | time | details |\n|---|---|---|---|\n")
	for _, c := range rep.Checks {
		result := c.State.Label()
		if c.State == Failed || c.State == Incomplete {
			result = "**" + result + "**"
		}
		if c.Required && (c.State == NotClaimed || c.State == NotSelected || c.State == Skipped) {
			// The reason the run cannot pass.
			result = "**" + result + " (required)**"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f s | %s |\n", c.Name, result, float64(c.Duration)/1000, oneLine(c.Reason()))
	}
	for _, c := range rep.Checks {
		if len(c.Timings) == 0 && len(c.Traffic) == 0 && len(c.Notes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", c.Name)
		for _, k := range slices.Sorted(maps.Keys(c.Timings)) {
			budget := ""
			if bgt, ok := c.Budgets[k]; ok {
				budget = fmt.Sprintf(" (budget %.1f s)", float64(bgt)/1000)
			}
			fmt.Fprintf(&b, "- %s: %.2f s%s\n", k, float64(c.Timings[k])/1000, budget)
		}
		for _, k := range slices.Sorted(maps.Keys(c.Traffic)) {
			t := c.Traffic[k]
			fmt.Fprintf(&b, "- traffic during %s: %s\n", k, t.Summary())
			for _, e := range t.Excused {
				fmt.Fprintf(&b, "  - excused: %s\n", e)
			}
			if t.Visualization != "" && t.Linearizability == validate.NotLinearizable {
				// report.html links every phase's page; here only the evidence.
				fmt.Fprintf(&b, "  - visualization: %s\n", t.Visualization)
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// MiB converts bytes to mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdText keeps Markdown from reading emphasis into a line of text.
func mdText(s string) string {
	return strings.NewReplacer("*", "\\*", "_", "\\_", "`", "\\`").Replace(s)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
