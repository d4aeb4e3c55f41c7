package html

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/report"
)

const (
	// resultsScreenshotName is the results page's screenshot, beside
	// report-html.png.
	resultsScreenshotName = "results-html.png"
	// The window of the screenshot: the matrix and the first bar charts.
	resultsScreenshotWidth, resultsScreenshotHeight = 1280, 1100
)

// resultsFacts is what the test reads back from the results page's DOM.
type resultsFacts struct {
	Columns []string `json:"columns"`
	Rows    []struct {
		Check string `json:"check"`
		Cells []struct {
			Label      string `json:"label"`
			Class      string `json:"class"`
			Background string `json:"background"`
		} `json:"cells"`
	} `json:"rows"`
	Verdicts []string `json:"verdicts"`
	// LinksResolve: every link of the matrix lands on an element.
	LinksResolve bool `json:"linksResolve"`
	Links        int  `json:"links"`
	Charts       []struct {
		Check   string `json:"check"`
		Timing  string `json:"timing"`
		Columns int    `json:"columns"`
		// BarWidthsPx are the bars as laid out on screen, in row order.
		BarWidthsPx      []float64 `json:"barWidthsPx"`
		Values           []string  `json:"values"`
		BudgetLines      int       `json:"budgetLines"`
		BarsInFrame      bool      `json:"barsInFrame"`
		RenderedWidthPx  float64   `json:"renderedWidthPx"`
		RenderedHeightPx float64   `json:"renderedHeightPx"`
	} `json:"charts"`
}

// Rendered boxes and the SVG DOM's lengths, not attributes: they prove
// the browser laid the page out.
const readResultsFacts = `(() => {
const matrix = document.getElementById('matrix');
const links = Array.from(matrix.querySelectorAll('a[href^="#"]'));
return {
  columns: Array.from(matrix.querySelectorAll('thead th[scope=col]')).map(th => th.textContent),
  rows: Array.from(matrix.querySelectorAll('tbody tr')).map(tr => ({
    check: tr.dataset.check,
    cells: Array.from(tr.querySelectorAll('td.cell')).map(td => ({
      label: td.textContent, class: td.className, background: getComputedStyle(td).backgroundColor,
    })),
  })),
  verdicts: Array.from(matrix.querySelectorAll('tfoot td')).map(td => td.textContent),
  links: links.length,
  linksResolve: links.every(a => document.getElementById(a.getAttribute('href').slice(1)) !== null),
  charts: Array.from(document.querySelectorAll('svg.bars')).map(svg => {
    const frame = svg.querySelector('rect.frame');
    const bars = Array.from(svg.querySelectorAll('rect.bar'));
    const inside = b => b.x.baseVal.value >= frame.x.baseVal.value && b.x.baseVal.value + b.width.baseVal.value <= frame.x.baseVal.value + frame.width.baseVal.value + 0.01 &&
      b.y.baseVal.value >= frame.y.baseVal.value && b.y.baseVal.value + b.height.baseVal.value <= frame.y.baseVal.value + frame.height.baseVal.value;
    const box = svg.getBoundingClientRect();
    return {
      check: svg.dataset.check, timing: svg.dataset.timing, columns: Number(svg.dataset.columns),
      barWidthsPx: bars.map(b => b.getBoundingClientRect().width),
      values: Array.from(svg.querySelectorAll('text.value')).map(t => t.textContent),
      budgetLines: svg.querySelectorAll('line.budget').length,
      barsInFrame: frame !== null && bars.every(inside),
      renderedWidthPx: box.width, renderedHeightPx: box.height,
    };
  }),
};
})()`

// TestResultsHTMLInChromiumHasTheMatrixAndABarPerColumn opens the results
// page of testdata's two runs: the matrix is the Markdown's, coloured by
// state; every timing both runs measured is a chart of two bars in the
// ratio of their values, with the budget line across both rows.
func TestResultsHTMLInChromiumHasTheMatrixAndABarPerColumn(t *testing.T) {
	runs := testdataRuns(t, testdataDir)
	page := filepath.Join(t.TempDir(), "results.html")
	if err := WriteResults(page, runs, resultsCheckOrder); err != nil {
		t.Fatal(err)
	}
	var facts resultsFacts
	png := browse(t, page, "#matrix", readResultsFacts, &facts, resultsScreenshotWidth, resultsScreenshotHeight)
	writeScreenshot(t, resultsScreenshotName, png)

	columns := report.Columns(runs)
	var names, verdicts []string
	for _, r := range columns {
		names = append(names, report.ColumnName(r))
		verdicts = append(verdicts, fmt.Sprintf("%s (%d/%d)", r.Verdict, r.Counts.RequiredPassed, r.Counts.Required))
	}
	if !slices.Equal(facts.Columns, names) || !slices.Equal(facts.Verdicts, verdicts) {
		t.Errorf("matrix columns %q, verdicts %q; want %q, %q", facts.Columns, facts.Verdicts, names, verdicts)
	}
	if len(facts.Rows) != len(resultsCheckOrder) {
		t.Fatalf("matrix has %d rows, want one per check: %v", len(facts.Rows), resultsCheckOrder)
	}
	backgrounds := map[string]string{}
	for i, row := range facts.Rows {
		if row.Check != resultsCheckOrder[i] || len(row.Cells) != len(columns) {
			t.Errorf("matrix row %d: %+v, want %s with a cell per column", i, row, resultsCheckOrder[i])
			continue
		}
		for j, cell := range row.Cells {
			want, _ := report.CellLabel(columns[j].CheckNamed(row.Check))
			if cell.Label != want {
				t.Errorf("%s in %s: %q, want %q", row.Check, names[j], cell.Label, want)
			}
			if prev, seen := backgrounds[cell.Class]; seen && prev != cell.Background {
				t.Errorf("cells %q have backgrounds %s and %s", cell.Class, prev, cell.Background)
			}
			backgrounds[cell.Class] = cell.Background
		}
	}
	// Passed, failed and incomplete cells are coloured, each its own way.
	pass, fail, incomplete := backgrounds["cell passed"], backgrounds["cell failed"], backgrounds["cell incomplete"]
	if transparent := "rgba(0, 0, 0, 0)"; pass == transparent || fail == transparent || incomplete == transparent || pass == fail || fail == incomplete || pass == incomplete {
		t.Errorf("cell backgrounds passed %q, failed %q, incomplete %q: want three colours", pass, fail, incomplete)
	}
	if facts.Links == 0 || !facts.LinksResolve {
		t.Errorf("%d links in the matrix, all resolving: %v", facts.Links, facts.LinksResolve)
	}

	if len(facts.Charts) == 0 {
		t.Fatal("no bar chart")
	}
	for _, c := range facts.Charts {
		if c.Columns != len(columns) || len(c.BarWidthsPx) != len(columns) || c.BudgetLines != len(columns) || !c.BarsInFrame ||
			c.RenderedWidthPx < 800 || c.RenderedHeightPx < 60 {
			t.Errorf("bar chart of %s %s: %+v, want a bar and a budget line per column inside the frame", c.Check, c.Timing, c)
			continue
		}
		// The bars' rendered widths keep the ratio of the values.
		var values []report.Millis
		for _, r := range columns {
			values = append(values, r.CheckNamed(c.Check).Timings[c.Timing])
		}
		var labels []string
		for _, v := range values {
			labels = append(labels, barValue(v))
		}
		if !slices.Equal(c.Values, labels) {
			t.Errorf("bar chart of %s %s labels %q, want %q", c.Check, c.Timing, c.Values, labels)
		}
		if got, want := c.BarWidthsPx[1]/c.BarWidthsPx[0], float64(values[1]/values[0]); values[0] > 1000 && values[1] > 1000 && math.Abs(got-want) > 0.01 {
			t.Errorf("bar chart of %s %s: bars %v px in the ratio %.3f, values %v in %.3f", c.Check, c.Timing, c.BarWidthsPx, got, values, want)
		}
	}
}
