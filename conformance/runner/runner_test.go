package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// A real API server without nodes: the operator installs but never becomes
// available, so the run must end INCOMPLETE (2), not "fail" (1), and still
// leave report.json, report.md, report.html and junit.xml. The node checks
// its filter selects by group are left out, not required, for want of
// nodes. (Ginkgo runs one suite per process: this is the package's only run.)
func TestRunThatCannotStartTheOperatorExitsTwoWithReports(t *testing.T) {
	kubeconfig, assets := apiservertest.Start(t)
	dir := t.TempDir()
	suiteCfg, err := os.ReadFile("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	quick := strings.Replace(string(suiteCfg), "default/operator-ready: [3m, 2s]", "default/operator-ready: [3s, 1s]", 1)
	if quick == string(suiteCfg) {
		t.Fatal("suite.yaml no longer has default/operator-ready: [3m, 2s]; update this test")
	}
	configPath := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(configPath, []byte(quick), 0o644); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	code := Run(context.Background(), Options{
		Framework:   framework.Options{Kubeconfig: kubeconfig, Kubectl: filepath.Join(assets, "kubectl"), TrafficImage: "unused", ReportDir: reportDir, SkipCleanup: true},
		ProfilePath: "../profiles/coreos-v0.9.4.yaml",
		ConfigPath:  configPath,
		LabelFilter: "create || faults",
		Timeout:     5 * time.Minute,
	})
	if code != ExitCouldNot {
		t.Errorf("exit code = %d, want %d", code, ExitCouldNot)
	}
	rep, err := report.ReadJSON(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := states(rep)
	if got["create"] != report.Incomplete || got["upgrade"] != report.NotSelected || rep.Verdict != report.VerdictIncomplete || rep.SetupFailure == "" {
		t.Errorf("checks = %v, verdict = %q, setup failure = %q", got, rep.VerdictLine, rep.SetupFailure)
	}
	for _, c := range rep.Checks {
		if !slices.Contains(nodeChecks, c.Name) {
			continue
		}
		if c.State != report.NotSelected || c.Required || c.Reason() != "needs 3 workers (one member on each), the cluster has 0 schedulable nodes" {
			t.Errorf("%s is %s (%q), required %v; want not selected for want of nodes, not required", c.Name, c.State, c.Reason(), c.Required)
		}
	}
	for _, f := range []string{"report.md", "report.html", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(reportDir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A history gone from the report dir costs the page its timeline, never
// the run its reports.
func TestWriteReportsWritesTheHTMLBesideTheMarkdown(t *testing.T) {
	dir := t.TempDir()
	rec := report.NewRecorder()
	rec.Traffic("upgrade", "upgrade", time.Time{}, validate.Result{Linearizability: validate.Linearizable}, filepath.Join(dir, "upgrade", "history-upgrade.jsonl"))
	rec.Check("upgrade").State, rec.Check("upgrade").Required = report.Passed, true
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: "reference", Checks: rec.Checks(nil)}
	rep.Judge()
	if err := writeReports(dir, rep, types.Report{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.json", "report.md", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "history-upgrade.jsonl is missing") {
		t.Errorf("report.html does not say the history is missing (%v)", err)
	}
}

func TestValidateLabelFilter(t *testing.T) {
	for filter, ok := range map[string]bool{"": true, "create": true, "create || (scale && !upgrade)": true, "create &&": false, "chaos": false,
		"faults": true, "book && !upgrade": true, "faults && !node-loss": true} {
		if err := ValidateLabelFilter(filter); (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok = %v", filter, err, ok)
		}
	}
}

// A group label selects its checks and only those.
func TestSelectedByGroup(t *testing.T) {
	for _, tc := range []struct {
		filter, check string
		want          bool
	}{
		{"faults", "kill", true}, {"faults", "drain", true}, {"faults", "create", false}, {"faults", "rbac", false},
		{"book", "upgrade", true}, {"book", "quorum-loss", false},
		{"faults && !node-loss && !drain", "node-loss", false}, {"faults && !node-loss && !drain", "operator-crash", true},
		{"create || faults", "create", true},
	} {
		if got := Selected(tc.filter, tc.check); got != tc.want {
			t.Errorf("Selected(%q, %q) = %v, want %v", tc.filter, tc.check, got, tc.want)
		}
	}
}
