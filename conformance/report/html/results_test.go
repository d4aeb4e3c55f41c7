package html

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// resultsCheckOrder is the checks of testdata's two runs in
// profile.CheckLabels' order (this package does not import profile).
var resultsCheckOrder = []string{"create", "scale", "replace", "kill", "upgrade", "rbac", "cleanup"}

// testdataRuns are testdata's two recorded runs: the reference's
// report.json and coreos-v0.9.4's, derived from it (see coreosRun).
func testdataRuns(t *testing.T, dir string) []*report.Report {
	t.Helper()
	var runs []*report.Report
	for _, name := range []string{"report.json", coreosReport} {
		r, err := report.ReadJSON(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

func renderResults(t *testing.T, runs []*report.Report) string {
	t.Helper()
	var b strings.Builder
	if err := RenderResults(&b, runs, resultsCheckOrder); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestResultsPageHasTheMatrixOfTheMarkdown(t *testing.T) {
	runs := testdataRuns(t, testdataDir)
	page := renderResults(t, runs)
	const coreos, ref = `data-column="coreos-v0.9.4 on v1.34.4"`, `data-column="reference on v1.34.4"`
	for _, want := range []string{
		// Columns in the Markdown's order: same Kubernetes, so by profile.
		`<th scope="col" ` + coreos + `>coreos-v0.9.4 on v1.34.4</th><th scope="col" ` + ref + `>reference on v1.34.4</th>`,
		// A pass with a note that qualifies it links to the note.
		`<td class="cell passed" ` + coreos + `><a href="#run-1-create">pass (34.5 s)</a></td><td class="cell passed" ` + ref + `>pass (19.2 s)</td>`,
		`<td class="cell failed" ` + coreos + ` title="mttr-leader took 3m20s, budget 3m0s"><a href="#run-1-replace">fail</a></td><td class="cell passed" ` + ref + `>pass (33.9 s)</td>`,
		`<td class="cell not-run" ` + coreos + ` title="profile does not claim kill"><a href="#run-1-kill">not claimed</a></td><td class="cell not-run" ` + ref + `>not run</td>`,
		`<td class="cell incomplete" ` + coreos,
		`><a href="#run-1-rbac">INCOMPLETE</a></td><td class="cell passed" ` + ref + `>pass (0.5 s)</td>`,
		`<td class="verdict fail" ` + coreos + `>FAIL (2/6)</td><td class="verdict pass" ` + ref + `>PASS (6/6)</td>`,
		// The reasons under the matrix, whole, where the cells link.
		`<li id="run-1-replace"><b>replace <span class="state failed">failed</span></b>: <span class="reason">mttr-leader took 3m20s, budget 3m0s</span></li>`,
		`<b>replace <span class="state failed">failed</span></b>, note: <span class="reason">leader pod replace-77301-9xk2d deleted`,
		`<li id="run-1-create"><b>create <span class="state passed">passed</span></b>, note: <span class="reason">profile workaround: 1 object(s)`,
		`<li id="run-1-upgrade"><b>upgrade <span class="state failed">failed</span></b>: <span class="reason">Timed out after 600.000s.`,
		"Kubernetes v1.34.4, etcd 3.5.6 → 3.6.16, operator v0.9.4, suite (devel); run 2026-12-03, 3017 s. Operator peak RSS 10.3 MiB.",
		`<section class="run" id="run-2" data-column="reference on v1.34.4">`,
		"<li>every check passed</li>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("results page lacks %q", want)
		}
	}
	// Every cell says what the Markdown's says, in the same place.
	md := report.Matrix(runs, resultsCheckOrder)
	cells := regexp.MustCompile(`<td class="cell [^"]+" data-column="[^"]+"[^>]*>(?:<a [^>]+>)?([^<]+)`)
	for _, check := range resultsCheckOrder {
		row := regexp.MustCompile(`(?s)<tr data-check="` + check + `">.*?</tr>`).FindString(page)
		var labels []string
		for _, m := range cells.FindAllStringSubmatch(row, -1) {
			labels = append(labels, m[1])
		}
		mdRow := regexp.MustCompile(`(?m)^\| ` + check + ` \|.*$`).FindString(md)
		want := strings.Split(strings.Trim(strings.ReplaceAll(mdRow, "**", ""), "| "), " | ")[1:]
		if strings.Join(labels, ";") != strings.Join(want, ";") {
			t.Errorf("row %s: page %q, Markdown %q", check, labels, want)
		}
	}
	for _, never := range []string{"<script", "src=", "http://", "https://", "<link"} {
		if strings.Contains(page, never) {
			t.Errorf("results page contains %q", never)
		}
	}
}

// The timings both runs measured get a chart each, a bar per column with
// its value in seconds and the budget line across it; upgrade's, measured
// by the reference alone, compare nothing and get none.
func TestResultsPageComparesTheTimingsOfSeveralColumns(t *testing.T) {
	page := renderResults(t, testdataRuns(t, testdataDir))
	charts := regexp.MustCompile(`<svg class="bars" data-check="([^"]+)" data-timing="([^"]+)" data-columns="(\d+)"`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, c := range charts {
		got = append(got, c[1]+" "+c[2]+" "+c[3])
	}
	want := []string{"create time-to-ready 2", "scale scale-up 2", "replace mttr-follower 2", "replace mttr-leader 2", "replace replace/longest-write-gap 2"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("bar charts %q, want %q", got, want)
	}
	mttrLeader := chartOf(t, page, "replace", "mttr-leader")
	for _, want := range []string{
		"<figcaption><b>replace</b> · mttr-leader · budget 180.0 s</figcaption>",
		// 200 s of an axis to 200 s (niceCeil of the larger value) fills the plot.
		`<rect class="bar over" x="308" y="27" width="572.0" height="14"/>`,
		`<text class="value" x="884.0" y="38">200.00 s</text>`,
		`<text class="column-name" x="300" y="38" text-anchor="end">coreos-v0.9.4 on v1.34.4<tspan class="failed"> · fail</tspan></text>`,
		// The reference's 25.1 s, an eighth of it.
		`<rect class="bar" x="308" y="51" width="71.8" height="14"/>`,
		`<text class="value" x="383.8" y="62">25.10 s</text>`,
		// The budget at 180 of 200 s, on both rows, labelled once.
		`<line class="budget" x1="822.8" y1="22" x2="822.8" y2="46">`,
		`<line class="budget" x1="822.8" y1="46" x2="822.8" y2="70">`,
		`<text class="budget-label" x="822.8" y="16" text-anchor="middle">budget 180.0 s</text>`,
		"<title>coreos-v0.9.4 on v1.34.4: 200.00 s, budget 180.0 s; the check: fail</title>",
	} {
		if !strings.Contains(mttrLeader, want) {
			t.Errorf("mttr-leader chart lacks %q:\n%s", want, mttrLeader)
		}
	}
	ready := chartOf(t, page, "create", "time-to-ready")
	for _, want := range []string{">34.54 s</text>", ">19.20 s</text>", `<rect class="bar" `, "budget 120.0 s"} {
		if !strings.Contains(ready, want) {
			t.Errorf("time-to-ready chart lacks %q:\n%s", want, ready)
		}
	}
	if strings.Contains(ready, "bar over") {
		t.Errorf("time-to-ready is within budget in both columns, a bar is drawn over it:\n%s", ready)
	}
}

// chartOf is the figure of one timing's bar chart in the page.
func chartOf(t *testing.T, page, check, timing string) string {
	t.Helper()
	fig := regexp.MustCompile(`(?s)<figure class="timing" data-check="` + regexp.QuoteMeta(check) + `" data-timing="` + regexp.QuoteMeta(timing) + `">.*?</figure>`).FindString(page)
	if fig == "" {
		t.Fatalf("no bar chart of %s %s", check, timing)
	}
	return fig
}
