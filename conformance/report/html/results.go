package html

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// resultsTmpl is the results page: the matrix of docs/results.md (a column
// per profile on a Kubernetes version, a row per check) and its timings
// compared as bar charts, self-contained as report.html is.
var resultsTmpl = template.Must(template.ParseFS(templates, "results.html.tmpl", "common.html.tmpl"))

// WriteResults renders the results page of runs (one per column, runs of
// a profile on one Kubernetes version already merged) into path.
func WriteResults(path string, columns []*report.Report, checkOrder []string) error {
	var b bytes.Buffer
	if err := RenderResults(&b, columns, checkOrder); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// RenderResults writes the results page: the matrix as report.Matrix
// renders it in Markdown, coloured, each cell that did not pass linked to
// its reason under the matrix, and for every timing measured in more than
// one column a bar chart comparing them against the budget.
func RenderResults(w io.Writer, columns []*report.Report, checkOrder []string) error {
	return resultsTmpl.Execute(w, newResultsPage(columns, checkOrder))
}

type resultsPage struct {
	Columns []matrixColumn
	Rows    []matrixRow
	Charts  []*barChart
}

// matrixColumn is a run: its heading, its verdict and, under the matrix,
// its summary and remarks.
type matrixColumn struct {
	Name, Anchor, Summary    string
	Verdict, VerdictClass    string
	RequiredPassed, Required int
	Remarks                  []remarkView
}

// remarkView is a report.Remark; Anchor is set on a check's first remark,
// where its cells link.
type remarkView struct {
	Check, State, StateClass, Text, Anchor string
	Note                                   bool
}

type matrixRow struct {
	Check string
	Cells []matrixCell
}

// matrixCell is report.CellLabel's label; Link points to the check's
// remarks under the matrix, when it has some.
type matrixCell struct {
	Column, Label, Class, Link, Reason string
}

func newResultsPage(reports []*report.Report, checkOrder []string) *resultsPage {
	columns := report.Columns(reports)
	p := &resultsPage{Charts: timingCharts(columns, checkOrder)}
	// links[i][check] is the anchor of the check's remarks in column i.
	links := make([]map[string]string, len(columns))
	for i, r := range columns {
		col := matrixColumn{Name: report.ColumnName(r), Anchor: fmt.Sprintf("run-%d", i+1), Summary: report.RunSummary(r),
			Verdict: string(r.Verdict), VerdictClass: verdictClass(r.Verdict), RequiredPassed: r.Counts.RequiredPassed, Required: r.Counts.Required}
		links[i] = map[string]string{}
		for _, rm := range report.Remarks(r, checkOrder) {
			v := remarkView{Check: rm.Check, State: rm.State.Label(), StateClass: stateClass(rm.State), Text: rm.Text, Note: rm.Note}
			if _, seen := links[i][rm.Check]; !seen {
				v.Anchor = col.Anchor + "-" + rm.Check
				links[i][rm.Check] = v.Anchor
			}
			col.Remarks = append(col.Remarks, v)
		}
		p.Columns = append(p.Columns, col)
	}
	for _, name := range checkOrder {
		row := matrixRow{Check: name}
		for i, r := range columns {
			c := r.CheckNamed(name)
			label, _ := report.CellLabel(c)
			cell := matrixCell{Column: p.Columns[i].Name, Label: label, Class: "not-run", Link: links[i][name]}
			if c != nil {
				cell.Class, cell.Reason = stateClass(c.State), c.Reason()
			}
			row.Cells = append(row.Cells, cell)
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}
