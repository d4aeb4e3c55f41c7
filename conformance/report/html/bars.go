package html

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// A timing bar chart's layout, in its user units (viewBox): the columns'
// names on the left, a bar per column, a value label after each bar, the
// seconds axis under them.
const (
	barChartWidth = 960
	// barNameRight is where the columns' names end (right-aligned).
	barNameRight = 300
	barPlotLeft  = 308
	// barPlotRight leaves room after the longest bar for its label.
	barPlotRight = 880
	// barPlotTop leaves room above the rows for the budget's label.
	barPlotTop   = 22
	barRowPitch  = 24
	barHeight    = 14
	barAxisRoom  = 26
	barLabelGap  = 4
	barTextShift = 4 // from a row's middle to its text's baseline
)

// barChart compares one timing of one check across the matrix's columns:
// a row per column, the value as a bar, the budget as a line across the
// row. Every coordinate is computed here, as for the timelines. The axis
// reaches the largest budget as well as the largest value, so the line is
// always drawn and the bars show how much of the budget was used.
type barChart struct {
	Check, Timing string
	// Caption names the timing and its budget (or budgets, when the
	// columns' differ).
	Caption                             string
	Width, Height, Left, Right, PlotTop float64
	PlotWidth, PlotHeight, PlotBottom   float64
	NameRight, BarHeight                float64
	AxisLabelY                          float64
	Ticks                               []tick
	Rows                                []barRow
	// BudgetLabel is written once above the budget line when every
	// column has the same budget.
	BudgetLabel *budgetLabel
}

// barRow is one column's value. A column that did not measure the timing
// has no bar but Missing, and its State says why.
type barRow struct {
	Column string
	// State is the check's state in the column when it did not pass: a
	// timing of a failed check is measured all the same, but read with it.
	State, StateClass string
	Top, TextY, BarY  float64
	BarWidth          float64
	Value             string
	ValueX            float64
	Over              bool
	Missing           string
	Budget            *budgetMark
	// Title is the row's hover text: the value, its budget, the check's
	// state in that column.
	Title string
}

// budgetMark is the budget's line across one row; the rows' marks of one
// budget join into one line.
type budgetMark struct {
	X, Y1, Y2 float64
	Title     string
}

type budgetLabel struct {
	X, Y  float64
	Label string
}

// timingCharts are the bar charts of every timing that more than one
// column measured, in check order, then by timing name. A timing of one
// column compares nothing: that run's own report gives it.
func timingCharts(columns []*report.Report, checkOrder []string) []*barChart {
	var charts []*barChart
	for _, check := range checkOrder {
		measured := map[string]int{}
		for _, r := range columns {
			if c := r.CheckNamed(check); c != nil {
				for name := range c.Timings {
					measured[name]++
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(measured)) {
			if measured[name] > 1 {
				charts = append(charts, newBarChart(columns, check, name))
			}
		}
	}
	return charts
}

// newBarChart lays out the timing of a check across the columns.
func newBarChart(columns []*report.Report, check, timing string) *barChart {
	type entry struct {
		value, budget       report.Millis
		measured, hasBudget bool
		check               *report.Check
	}
	entries := make([]entry, len(columns))
	var top report.Millis
	budgets := map[report.Millis][]string{}
	for i, r := range columns {
		c := r.CheckNamed(check)
		e := entry{check: c}
		if c != nil {
			e.value, e.measured = c.Timings[timing]
			e.budget, e.hasBudget = c.Budgets[timing]
		}
		if e.measured {
			top = max(top, e.value)
		}
		if e.hasBudget {
			top = max(top, e.budget)
			budgets[e.budget] = append(budgets[e.budget], report.ColumnName(r))
		}
		entries[i] = e
	}
	axis := niceCeil(float64(top) / 1000)
	x := func(ms report.Millis) float64 {
		return barPlotLeft + float64(ms)/1000/axis*(barPlotRight-barPlotLeft)
	}
	plotBottom := float64(barPlotTop + barRowPitch*len(columns))
	b := &barChart{Check: check, Timing: timing, Width: barChartWidth, Height: plotBottom + barAxisRoom, NameRight: barNameRight, BarHeight: barHeight,
		Left: barPlotLeft, Right: barPlotRight, PlotTop: barPlotTop, PlotBottom: plotBottom,
		PlotWidth: barPlotRight - barPlotLeft, PlotHeight: plotBottom - barPlotTop, AxisLabelY: plotBottom + 14,
		Caption: timing + " · " + budgetCaption(budgets)}
	for _, v := range axisTicks(axis) {
		b.Ticks = append(b.Ticks, tick{At: x(report.Millis(v * 1000)), Label: trimFloat(v) + " s"})
	}
	for i, e := range entries {
		row := barRow{Column: report.ColumnName(columns[i]), Top: float64(barPlotTop + barRowPitch*i)}
		mid := row.Top + barRowPitch/2
		row.TextY, row.BarY = mid+barTextShift, mid-barHeight/2
		budget := ""
		if e.hasBudget {
			budget = ", budget " + seconds(e.budget, 1)
			row.Budget = &budgetMark{X: x(e.budget), Y1: row.Top, Y2: row.Top + barRowPitch, Title: "budget " + seconds(e.budget, 1)}
		}
		state, _ := report.CellLabel(e.check)
		if e.check == nil || e.check.State != report.Passed {
			row.State, row.StateClass = state, "not-run"
			if e.check != nil {
				row.StateClass = stateClass(e.check.State)
			}
		}
		if !e.measured {
			row.Missing = "not measured"
			row.Title = fmt.Sprintf("%s: not measured%s; the check: %s", row.Column, budget, state)
			row.ValueX = barPlotLeft + barLabelGap
		} else {
			row.Value = barValue(e.value)
			// Even a value that rounds to no width keeps a sliver of a bar:
			// the row then reads as measured, not missing.
			row.BarWidth = max(x(e.value)-barPlotLeft, 1)
			row.ValueX = barPlotLeft + row.BarWidth + barLabelGap
			row.Over = e.hasBudget && e.value > e.budget
			row.Title = fmt.Sprintf("%s: %s%s; the check: %s", row.Column, row.Value, budget, state)
		}
		b.Rows = append(b.Rows, row)
	}
	if len(budgets) == 1 {
		for ms := range budgets {
			// Keep the label inside the plot even for a budget at its edge.
			b.BudgetLabel = &budgetLabel{X: min(max(x(ms), barPlotLeft+40), barPlotRight-40), Y: barPlotTop - 6, Label: "budget " + seconds(ms, 1)}
		}
	}
	return b
}

// budgetCaption names the budget of a timing, or each column's when they
// differ.
func budgetCaption(budgets map[report.Millis][]string) string {
	switch len(budgets) {
	case 0:
		return "no budget"
	case 1:
		for ms := range budgets {
			return "budget " + seconds(ms, 1)
		}
	}
	var parts []string
	for _, ms := range slices.Sorted(maps.Keys(budgets)) {
		parts = append(parts, fmt.Sprintf("%s (%s)", seconds(ms, 1), strings.Join(budgets[ms], ", ")))
	}
	return "budgets " + strings.Join(parts, "; ")
}

// axisTicks divides an axis that niceCeil chose (1, 2 or 5 times a power
// of ten) into steps people count in: fifths of 1 and 5, quarters of 2.
func axisTicks(top float64) []float64 {
	steps := 5
	if lead := top / math.Pow(10, math.Floor(math.Log10(top))); math.Round(lead) == 2 {
		steps = 4
	}
	var out []float64
	for i := 0; i <= steps; i++ {
		out = append(out, top*float64(i)/float64(steps))
	}
	return out
}

// barValue labels a bar in seconds, to the millisecond below a second
// (write gaps), where two decimals would make 44 ms and 36 ms look alike.
func barValue(ms report.Millis) string {
	if ms < 1000 {
		return seconds(ms, 3)
	}
	return seconds(ms, 2)
}
