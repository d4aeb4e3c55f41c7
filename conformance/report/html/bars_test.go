package html

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// run is a column of one check with one timing; budget 0 is none.
func run(profile string, state report.State, timing string, value, budget report.Millis) *report.Report {
	c := &report.Check{Name: "scale", State: state, Timings: map[string]report.Millis{}, Budgets: map[string]report.Millis{}}
	if value > 0 {
		c.Timings[timing] = value
	}
	if budget > 0 {
		c.Budgets[timing] = budget
	}
	return &report.Report{Profile: profile, Environment: report.Environment{Kubernetes: "v1.34.4"}, Checks: []*report.Check{c}}
}

func TestBarChartPutsValuesAndBudgetsOnOneAxis(t *testing.T) {
	columns := []*report.Report{
		run("a", report.Passed, "scale-up", 30000, 90000),
		run("b", report.Failed, "scale-up", 60000, 120000),
		run("c", report.NotClaimed, "scale-up", 0, 0),
		run("d", report.Passed, "scale-up", 0.6, 90000),
	}
	b := newBarChart(columns, "scale", "scale-up")
	// The axis reaches the largest budget, 120 s: niceCeil makes it 200 s,
	// in quarters.
	var ticks []string
	for _, tk := range b.Ticks {
		ticks = append(ticks, fmt.Sprintf("%s@%.0f", tk.Label, tk.At))
	}
	if want := []string{"0 s@308", "50 s@451", "100 s@594", "150 s@737", "200 s@880"}; !slices.Equal(ticks, want) {
		t.Errorf("ticks %q, want %q", ticks, want)
	}
	plot := float64(barPlotRight - barPlotLeft)
	for i, want := range []struct {
		width   float64
		value   string
		budgetX float64
		state   string
		missing bool
	}{
		{width: 0.15 * plot, value: "30.00 s", budgetX: barPlotLeft + 0.45*plot},
		{width: 0.3 * plot, value: "60.00 s", budgetX: barPlotLeft + 0.6*plot, state: "fail"},
		{state: "not claimed", missing: true},
		// A fraction of a millisecond still gets a sliver of a bar, and a label to
		// the millisecond.
		{width: 1, value: "0.001 s", budgetX: barPlotLeft + 0.45*plot},
	} {
		r := b.Rows[i]
		if math.Abs(r.BarWidth-want.width) > 0.01 || r.Value != want.value || r.State != want.state || (r.Missing != "") != want.missing {
			t.Errorf("row %d: %+v, want %+v", i, r, want)
		}
		switch {
		case want.budgetX == 0 && r.Budget != nil:
			t.Errorf("row %d has a budget line: %+v", i, r.Budget)
		case want.budgetX != 0 && (r.Budget == nil || math.Abs(r.Budget.X-want.budgetX) > 0.01 || r.Budget.Y2-r.Budget.Y1 != barRowPitch):
			t.Errorf("row %d: budget %+v, want at x %.1f across the row", i, r.Budget, want.budgetX)
		}
		if r.Over {
			t.Errorf("row %d is over its budget", i)
		}
	}
	// Budgets differ: named in the caption, no single label over the line.
	if want := "scale-up · budgets 90.0 s (a on v1.34.4, d on v1.34.4); 120.0 s (b on v1.34.4)"; b.Caption != want || b.BudgetLabel != nil {
		t.Errorf("caption %q, label %+v; want %q and no label", b.Caption, b.BudgetLabel, want)
	}
	if want := float64(barPlotTop + 4*barRowPitch + barAxisRoom); b.Height != want {
		t.Errorf("height %.0f, want %.0f for four rows", b.Height, want)
	}
}

func TestBarChartMarksAValueOverItsBudget(t *testing.T) {
	b := newBarChart([]*report.Report{run("a", report.Failed, "recovery", 374066, 240000), run("b", report.Passed, "recovery", 151281, 240000)}, "scale", "recovery")
	if !b.Rows[0].Over || b.Rows[1].Over {
		t.Errorf("over budget: %v, %v; want the first row only", b.Rows[0].Over, b.Rows[1].Over)
	}
	if b.BudgetLabel == nil || b.BudgetLabel.Label != "budget 240.0 s" || b.Caption != "recovery · budget 240.0 s" {
		t.Errorf("one budget: label %+v, caption %q", b.BudgetLabel, b.Caption)
	}
	// 374 s on an axis to 500 s.
	if want := 0.748132 * (barPlotRight - barPlotLeft); math.Abs(b.Rows[0].BarWidth-want) > 0.01 {
		t.Errorf("bar width %.2f, want %.2f", b.Rows[0].BarWidth, want)
	}
}

func TestTimingChartsCompareOnlyTimingsOfSeveralColumns(t *testing.T) {
	columns := []*report.Report{run("a", report.Passed, "scale-up", 3000, 0), run("b", report.Passed, "scale-down", 4000, 0), run("c", report.Passed, "scale-up", 5000, 0)}
	charts := timingCharts(columns, []string{"create", "scale"})
	if len(charts) != 1 || charts[0].Timing != "scale-up" || len(charts[0].Rows) != 3 || charts[0].Caption != "scale-up · no budget" {
		t.Fatalf("charts %+v, want scale-up's alone, a row per column", charts)
	}
	if r := charts[0].Rows[1]; r.Missing == "" || r.State != "" {
		t.Errorf("column b, whose check passed without scale-up: %+v", r)
	}
}

func TestAxisTicksCountInSteps(t *testing.T) {
	for top, want := range map[float64][]float64{
		1:   {0, 0.2, 0.4, 0.6, 0.8, 1},
		0.2: {0, 0.05, 0.1, 0.15, 0.2},
		500: {0, 100, 200, 300, 400, 500},
	} {
		got := axisTicks(top)
		if len(got) != len(want) {
			t.Errorf("axisTicks(%g) = %v, want %v", top, got, want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("axisTicks(%g) = %v, want %v", top, got, want)
				break
			}
		}
	}
}
