package html

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

func TestLocateFindsFilesOfAMovedReportDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "replace"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "replace", "history-replace.jsonl")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"replace/history-replace.jsonl", // relative, as TrimDir leaves it
		file,                            // where this run wrote it
		"/ci/builds/42/_report/replace/history-replace.jsonl", // written by a run elsewhere, then copied here
	} {
		found, rel, ok := locate(dir, name)
		if !ok || found != file || rel != "replace/history-replace.jsonl" {
			t.Errorf("locate(%q) = %q, %q, %v", name, found, rel, ok)
		}
	}
	for _, name := range []string{"", "replace/history-other.jsonl", "/ci/_report/other/history-other.jsonl", "replace"} {
		if _, _, ok := locate(dir, name); ok {
			t.Errorf("locate(%q) found a file", name)
		}
	}
}

// A run whose history is gone still gets its page, saying so; a history
// that is there gets its timeline, and porcupine's page a relative link.
func TestRenderSaysWhichHistoryIsMissingAndLinksTheVisualization(t *testing.T) {
	dir := t.TempDir()
	writeSmallHistory(t, dir, "upgrade/history-to-3.6.jsonl")
	vis := filepath.Join(dir, "upgrade", "linearizability-to-3.6.html")
	if err := os.WriteFile(vis, []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := report.NewRecorder()
	rec.Traffic("upgrade", "to-3.6", time.Time{}, validate.Result{Linearizability: validate.NotLinearizable, Failures: []string{"history is not linearizable"}, Visualization: vis},
		filepath.Join(dir, "upgrade", "history-to-3.6.jsonl"))
	rec.Traffic("replace", "replace", time.Time{}, validate.Result{Linearizability: validate.Linearizable}, filepath.Join(dir, "replace", "history-replace.jsonl"))
	rec.Timing("replace", "mttr-leader", 200*time.Second, 180*time.Second)
	rec.Note("replace", "leader pod <deleted> & replaced")
	rec.Check("upgrade").State, rec.Check("upgrade").Failure = report.Failed, "traffic during to-3.6: history is not linearizable"
	rec.Check("replace").State, rec.Check("replace").Failure = report.Failed, "mttr-leader took 3m20s, budget 3m0s"
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: "reference", Started: time.Unix(0, 0), Checks: rec.Checks([]string{"replace", "upgrade"}),
		Operator: &report.OperatorUsage{PeakRSSBytes: 16 << 20, PeakWorkingSetBytes: 21 << 20, Samples: 31}}
	for _, c := range rep.Checks {
		c.Required = true
	}
	rep.Judge()
	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		"FAIL (0/2: replace, upgrade failed)",
		"history file replace/history-replace.jsonl is missing from the report dir",
		`<a href="upgrade/linearizability-to-3.6.html">`,
		`<svg class="timeline" data-phase="to-3.6"`,
		`<span class="over">200.00 s</span> (180.0 s)`,
		"leader pod &lt;deleted&gt; &amp; replaced",
		"peak RSS 16.0 MiB",
		"history: <span class=\"path\">upgrade/history-to-3.6.jsonl</span>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Count(page, "<svg") != 1 {
		t.Errorf("%d SVGs, want 1: the missing history has none", strings.Count(page, "<svg"))
	}
	// Self-contained: nothing to fetch, nothing to run.
	for _, never := range []string{"<script", "src=", "http://", "https://", "<link"} {
		if strings.Contains(page, never) {
			t.Errorf("report.html contains %q", never)
		}
	}
	// The caller's report keeps its absolute paths.
	if h := rep.Checks[1].Traffic["to-3.6"].History; !filepath.IsAbs(h) {
		t.Errorf("Render changed the report: history %q", h)
	}
}
