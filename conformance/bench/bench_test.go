package bench

import (
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/report"
)

func run(ready, mttrLeader, mttrFollower float64, failedPuts int, rssMiB uint64) *report.Report {
	return &report.Report{
		Operator: &report.OperatorUsage{PeakRSSBytes: rssMiB << 20, Samples: 3},
		Checks: []*report.Check{
			{Name: "create", Timings: map[string]report.Millis{"time-to-ready": report.Millis(ready * 1000)}},
			{Name: "replace", Timings: map[string]report.Millis{"mttr-leader": report.Millis(mttrLeader * 1000), "mttr-non-leader": report.Millis(mttrFollower * 1000)}},
			{Name: "upgrade", Traffic: map[string]*report.Traffic{"upgrade": {FailedPuts: failedPuts, FailedGets: 1}}},
		},
	}
}

// withFloor adds the floor of a run that measured it.
func withFloor(r *report.Report, ready, mttr float64) *report.Report {
	r.Floor = &report.Check{Name: "floor", Timings: map[string]report.Millis{
		"time-to-ready": report.Millis(ready * 1000), "mttr-non-leader": report.Millis(mttr * 1000)}}
	return r
}

func TestSummarizeTakesMediansAndTotals(t *testing.T) {
	runs := map[string][]*report.Report{
		"reference": {withFloor(run(6, 10, 9, 0, 30), 5, 4), withFloor(run(7, 11, 10, 0, 32), 5, 6), run(50, 12, 10, 0, 31)},
		"coreos":    {run(36, 25, 24, 1, 20), run(37, 26, 25, 0, 21)},
	}
	rows := Summarize([]string{"reference", "coreos"}, runs)
	get := func(name string) Row {
		for _, r := range rows {
			if r.Metric.Name == name {
				return r
			}
		}
		t.Fatalf("no row %q", name)
		return Row{}
	}
	// The 50 s outlier does not move the median.
	if c := get("time to 3 members ready").Cells; c[0].Value != 7 || c[1].Value != 36.5 || c[0].Samples != 3 {
		t.Errorf("time to ready = %+v", c)
	}
	// Both kinds of pod deletion are samples of one MTTR.
	if c := get("MTTR after a member's pod is deleted").Cells; c[0].Value != 10 || c[0].Samples != 6 {
		t.Errorf("mttr = %+v", c)
	}
	// Failed operations add up: one failure in any run matters.
	if c := get("failed client ops during upgrade").Cells; c[0].Value != 3 || c[1].Value != 3 {
		t.Errorf("failed ops = %+v", c)
	}
	// The floor is the median of the runs that measured it.
	if f := get("time to 3 members ready").Floor; f.Value != 5 || f.Samples != 2 {
		t.Errorf("floor of time to ready = %+v", f)
	}
	if c := get("scale 3→4").Cells; c[0].Samples != 0 {
		t.Errorf("scale was never measured, got %+v", c)
	}

	md := Markdown([]string{"reference", "coreos"}, map[string]int{"reference": 3, "coreos": 2}, rows)
	for _, want := range []string{
		"| metric | floor (no operator) | reference (3 runs) | coreos (2 runs) | reference vs coreos |",
		"| time to 3 members ready (s, median) | 5.0 | 7.0 (1.4× floor) | 36.5 (7.3× floor) | 5.2× faster |",
		"| MTTR after a member's pod is deleted (s, median) | 5.0 | 10.0 (2.0× floor) | 25.0 (5.0× floor) | 2.5× faster |",
		"| operator peak RSS (MiB, median) | - | 31.0 | 20.5 | 1.5× more |",
		"| failed client ops during upgrade (ops, total) | - | 3 | 3 | 3 vs 3 |",
		"| scale 3→4 (s, median) | not measured | not measured | not measured | - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
