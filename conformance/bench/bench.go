// Package bench turns the report.json of repeated runs into a comparison:
// per metric, the median of each profile and how the others compare with
// the first (the baseline, usually the reference operator).
package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// Aggregation says how a metric's samples become one number.
type Aggregation string

const (
	// Median of the samples: timings, whose outliers should not dominate.
	Median Aggregation = "median"
	// Total of the samples: counts where a single occurrence matters.
	Total Aggregation = "total"
)

// Metric is one row of the comparison.
type Metric struct {
	Name string
	Unit string
	Agg  Aggregation
	// Samples extracts this metric's samples from one run; none when the
	// run did not measure it (e.g. the check failed before).
	Samples func(*report.Report) []float64
	// Floor extracts the same figure with no operator from a run that
	// measured the floor (report.Floor); nil for a metric with no floor.
	Floor func(*report.Report) []float64
}

// Metrics are the timing scenarios the benchmark compares.
var Metrics = []Metric{
	{"time to 3 members ready", "s", Median, timing("create", "time-to-ready"), floorTiming("time-to-ready")},
	{"scale 3→4", "s", Median, timing("scale", "scale-up"), floorTiming("scale-up")},
	{"scale 4→3", "s", Median, timing("scale", "scale-down"), floorTiming("scale-down")},
	{"MTTR after a member's pod is deleted", "s", Median, timing("replace", "mttr-leader", "mttr-non-leader"), floorTiming("mttr-non-leader")},
	{"upgrade duration per minor hop (3 members)", "s", Median, hops("upgrade"), nil},
	{"longest write gap during upgrade", "s", Median, traffic("upgrade", maxOf, func(t *report.Traffic) float64 { return float64(t.LongestWriteGap) / 1000 }), nil},
	{"p99 latency during upgrade (worst hop)", "ms", Median, traffic("upgrade", maxOf, func(t *report.Traffic) float64 { return float64(t.LatencyP99) }), nil},
	{"failed client ops during upgrade", "ops", Total, traffic("upgrade", sumOf, func(t *report.Traffic) float64 { return float64(t.FailedPuts + t.FailedGets) }), nil},
	{"operator peak RSS", "MiB", Median, func(r *report.Report) []float64 {
		if r.Operator == nil || r.Operator.Samples == 0 {
			return nil
		}
		return []float64{report.MiB(r.Operator.PeakRSSBytes)}
	}, nil},
}

func timing(check string, names ...string) func(*report.Report) []float64 {
	return func(r *report.Report) []float64 {
		var out []float64
		for _, c := range r.Checks {
			if c.Name != check {
				continue
			}
			for _, n := range names {
				if v, ok := c.Timings[n]; ok {
					out = append(out, float64(v)/1000)
				}
			}
		}
		return out
	}
}

// floorTiming is a timing of the floor (report.Floor) of a run that
// measured it.
func floorTiming(name string) func(*report.Report) []float64 {
	return func(r *report.Report) []float64 {
		if r.Floor == nil {
			return nil
		}
		if v, ok := r.Floor.Timings[name]; ok {
			return []float64{float64(v) / 1000}
		}
		return nil
	}
}

// hops are the upgrade check's per-hop durations (timings "to-<version>").
func hops(check string) func(*report.Report) []float64 {
	return func(r *report.Report) []float64 {
		var out []float64
		for _, c := range r.Checks {
			if c.Name != check {
				continue
			}
			for name, v := range c.Timings {
				if strings.HasPrefix(name, "to-") && !strings.Contains(name, "/") {
					out = append(out, float64(v)/1000)
				}
			}
		}
		return out
	}
}

func maxOf(a, b float64) float64 { return max(a, b) }
func sumOf(a, b float64) float64 { return a + b }

// traffic folds one value over every traffic phase of a check (the upgrade
// check has one per hop) into one sample per run.
func traffic(check string, fold func(a, b float64) float64, get func(*report.Traffic) float64) func(*report.Report) []float64 {
	return func(r *report.Report) []float64 {
		var out []float64
		for _, c := range r.Checks {
			if c.Name != check {
				continue
			}
			for _, t := range c.Traffic {
				if len(out) == 0 {
					out = []float64{get(t)}
				} else {
					out[0] = fold(out[0], get(t))
				}
			}
		}
		return out
	}
}

// Cell is one profile's value of a metric.
type Cell struct {
	Value   float64
	Samples int
}

// Row is one metric across profiles, in profile order, and its floor.
type Row struct {
	Metric Metric
	Cells  []Cell
	// Floor aggregates the floor of every run that measured it; NaN when
	// none did or the metric has none.
	Floor Cell
}

// Summarize aggregates every metric for each profile's runs, and its
// floor over all runs.
func Summarize(profiles []string, runs map[string][]*report.Report) []Row {
	rows := make([]Row, 0, len(Metrics))
	for _, m := range Metrics {
		row := Row{Metric: m}
		var floor []float64
		for _, p := range profiles {
			var samples []float64
			for _, r := range runs[p] {
				samples = append(samples, m.Samples(r)...)
				if m.Floor != nil {
					floor = append(floor, m.Floor(r)...)
				}
			}
			row.Cells = append(row.Cells, aggregate(m.Agg, samples))
		}
		row.Floor = aggregate(m.Agg, floor)
		rows = append(rows, row)
	}
	return rows
}

func aggregate(agg Aggregation, s []float64) Cell {
	if len(s) == 0 {
		return Cell{Value: math.NaN()}
	}
	if agg == Total {
		sum := 0.0
		for _, v := range s {
			sum += v
		}
		return Cell{Value: sum, Samples: len(s)}
	}
	s = slices.Sorted(slices.Values(s))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return Cell{Value: s[mid], Samples: len(s)}
	}
	return Cell{Value: (s[mid-1] + s[mid]) / 2, Samples: len(s)}
}

// Markdown renders the rows: the floor first, each profile's figure with
// its ratio to the floor ("1.4× floor"), and for each profile after the
// first a column saying how the first compares with it ("3.1× faster"
// means the first profile took a third of the time).
func Markdown(profiles []string, runsPerProfile map[string]int, rows []Row) string {
	var b strings.Builder
	b.WriteString("| metric | floor (no operator) |")
	for _, p := range profiles {
		fmt.Fprintf(&b, " %s (%d runs) |", p, runsPerProfile[p])
	}
	for _, p := range profiles[1:] {
		fmt.Fprintf(&b, " %s vs %s |", profiles[0], p)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", 2*len(profiles)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s (%s, %s) | %s |", r.Metric.Name, r.Metric.Unit, r.Metric.Agg, floorCell(r))
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %s%s |", format(r.Metric, c), toFloor(r.Floor, c))
		}
		for _, c := range r.Cells[1:] {
			fmt.Fprintf(&b, " %s |", compare(r.Metric, r.Cells[0], c))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// floorCell is the floor's figure, or why there is none.
func floorCell(r Row) string {
	switch {
	case r.Metric.Floor == nil:
		return "-"
	case math.IsNaN(r.Floor.Value):
		return "not measured"
	}
	return format(r.Metric, r.Floor)
}

// toFloor is " (1.4× floor)": c as a multiple of floor, when both exist.
func toFloor(floor, c Cell) string {
	if math.IsNaN(floor.Value) || math.IsNaN(c.Value) || floor.Value == 0 {
		return ""
	}
	return fmt.Sprintf(" (%.1f× floor)", c.Value/floor.Value)
}

func format(m Metric, c Cell) string {
	switch {
	case math.IsNaN(c.Value):
		return "not measured"
	case m.Agg == Total:
		return fmt.Sprintf("%.0f", c.Value)
	}
	return fmt.Sprintf("%.1f", c.Value)
}

// compare says how base compares with other for a lower-is-better metric.
func compare(m Metric, base, other Cell) string {
	switch {
	case math.IsNaN(base.Value) || math.IsNaN(other.Value):
		return "-"
	case m.Agg == Total:
		return fmt.Sprintf("%s vs %s", format(m, base), format(m, other))
	case base.Value == other.Value:
		return "same"
	case base.Value == 0 || other.Value == 0:
		return fmt.Sprintf("%s vs %s", format(m, base), format(m, other))
	}
	word := "faster"
	if m.Unit == "MiB" {
		word = "less"
	}
	ratio := other.Value / base.Value
	if ratio >= 1 {
		return fmt.Sprintf("%.1f× %s", ratio, word)
	}
	opposite := map[string]string{"faster": "slower", "less": "more"}[word]
	return fmt.Sprintf("%.1f× %s", 1/ratio, opposite)
}
