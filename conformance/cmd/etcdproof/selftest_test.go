package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

func writeReport(t *testing.T, rep *report.Report) string {
	t.Helper()
	rep.SchemaVersion = report.SchemaVersion
	rep.Judge()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestJudgeSelftest(t *testing.T) {
	failed := profile.Expectation{Check: "rbac", Reason: "dangerous grant"}
	unreadable := profile.Expectation{Check: "rbac", Reason: "cannot read the audit log", State: profile.ExpectIncomplete, AuditLog: profile.AuditLogUnreadable}
	rbacFailed := writeReport(t, &report.Report{Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Failed, Failure: "dangerous grant: secrets list"}}})
	rbacIncomplete := writeReport(t, &report.Report{Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Incomplete, Incomplete: "cannot read the audit log /r/no-such-dir/audit.log: open: no such file"}}})
	setupFailed := writeReport(t, &report.Report{SetupFailure: "operator not ready", Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Incomplete, Incomplete: "setup failed: operator not ready"}}})
	// One run per expectation: each is judged on its own check only.
	crash := profile.Expectation{Check: "operator-crash", Reason: "member pods: 0 of"}
	crashFailed := writeReport(t, &report.Report{Checks: []*report.Check{
		{Name: "upgrade", State: report.NotSelected, Skipped: "not selected by --label-filter"},
		{Name: "operator-crash", Required: true, State: report.Failed, Failure: "Timed out after 480.001s.\ncluster ns/operator-crash-1 is not healthy:\nmember unreachable: a: context deadline exceeded\nmember pods: 0 of 3 ready, want 3"},
	}})
	for _, tc := range []struct {
		name   string
		x      profile.Expectation
		report string
		code   int
		want   string // "": proven
	}{
		{"failed as intended", failed, rbacFailed, 1, ""},
		{"incomplete as intended", unreadable, rbacIncomplete, 2, ""},
		{"an incomplete check does not prove a failure", failed, rbacIncomplete, 2, "exited with code 2, want 1"},
		{"a failure does not prove incompleteness", unreadable, rbacFailed, 1, "exited with code 1, want 2"},
		{"a setup failure proves nothing", unreadable, setupFailed, 2, "which proves nothing"},
		{"exit 2 without the check incomplete", unreadable, writeReport(t, &report.Report{Checks: []*report.Check{{Name: "rbac", Required: true, State: report.NotSelected}}}), 2, "is not selected"},
		{"incomplete for another reason", profile.Expectation{Check: "rbac", Reason: "no request by", State: profile.ExpectIncomplete}, rbacIncomplete, 2, "for another reason"},
		{"no report", unreadable, filepath.Join(t.TempDir(), "report.json"), 2, "no such file"},
		{"the run's own check", crash, crashFailed, 1, ""},
		{"another expectation's check is not in this run", profile.Expectation{Check: "upgrade", Reason: "member unreachable"}, crashFailed, 1, "upgrade is not selected"},
		{"a check that is not in the report", profile.Expectation{Check: "node-loss", Reason: "stale member"}, crashFailed, 1, "the report has no check node-loss"},
	} {
		err := judgeSelftest("p/"+tc.x.Check, tc.x, tc.report, tc.code)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "p/"+tc.x.Check+": ") {
			t.Errorf("%s: error %q does not name the run", tc.name, err)
		}
	}
}

// selftest plans a run per expectation the label filter selects, each with
// a report folder of its own, and still plans the good profiles when one
// does not load.
func TestPlanSelftestRunsEachExpectationOnItsOwn(t *testing.T) {
	profiles, err := filepath.Glob(filepath.Join(repoConformance, "profiles", "selftest-*.yaml"))
	if err != nil || len(profiles) == 0 {
		t.Fatalf("selftest profiles: %v %v", profiles, err)
	}
	sizes := profile.Sizes{NodeLoss: 3, Drain: 3}
	plan := func(filter string, nodes int, paths ...string) (map[string]string, string, []error) {
		var out strings.Builder
		runs, failures := planSelftest(paths, runner.Select(filter, nil, sizes, nodes), "/r", &out)
		dirs := map[string]string{}
		for _, r := range runs {
			if _, dup := dirs[r.label()]; dup {
				t.Errorf("filter %q: %s planned twice", filter, r.label())
			}
			dirs[r.label()] = r.dir
		}
		return dirs, out.String(), failures
	}

	// make e2e-selftest on a one-node cluster: the node checks are left out.
	dirs, out, failures := plan("", 1, profiles...)
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	for label, dir := range map[string]string{
		"selftest-upgrade-all-at-once/upgrade":                        "/r/selftest-upgrade-all-at-once/upgrade",
		"selftest-upgrade-all-at-once/operator-crash":                 "/r/selftest-upgrade-all-at-once/operator-crash",
		"selftest-no-dead-member-removal/replace":                     "/r/selftest-no-dead-member-removal/replace",
		"selftest-overprivileged/rbac":                                "/r/selftest-overprivileged/rbac",
		"selftest-unreadable-audit-log/rbac":                          "/r/selftest-unreadable-audit-log/rbac",
		"selftest-operator-upgrade-restarts-members/operator-upgrade": "/r/selftest-operator-upgrade-restarts-members/operator-upgrade",
	} {
		if dirs[label] != dir {
			t.Errorf("one node: %s planned in %q, want %q", label, dirs[label], dir)
		}
	}
	for _, label := range []string{"selftest-no-dead-member-removal/node-loss", "selftest-drain-without-budget/drain", "selftest-budget-from-size/drain-during-rollout"} {
		if _, ok := dirs[label]; ok {
			t.Errorf("one node: %s planned", label)
		}
	}
	if !strings.Contains(out, "selftest-no-dead-member-removal: node-loss skipped: needs 3 workers (one member on each), the cluster has 1 schedulable node") {
		t.Errorf("the left-out node-loss expectation is not named:\n%s", out)
	}

	// make e2e-nodes-selftest on the 3-worker cluster.
	dirs, _, _ = plan("node-loss || drain", 3, profiles...)
	if len(dirs) != 2 || dirs["selftest-no-dead-member-removal/node-loss"] != "/r/selftest-no-dead-member-removal/node-loss" || dirs["selftest-drain-without-budget/drain"] == "" {
		t.Errorf("3 workers: planned %v, want node-loss of selftest-no-dead-member-removal and drain of selftest-drain-without-budget", dirs)
	}

	// A profile that does not load, or has no selftest section, fails
	// without keeping the others from running.
	bad := filepath.Join(t.TempDir(), "selftest-bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs, _, failures = plan("", runner.UnknownNodes, bad, filepath.Join(repoConformance, "profiles", "reference.yaml"), filepath.Join(repoConformance, "profiles", "selftest-upgrade-all-at-once.yaml"))
	if len(failures) != 2 || !strings.Contains(errors.Join(failures...).Error(), "reference.yaml: no selftest section") {
		t.Errorf("failures = %v", failures)
	}
	if len(dirs) != 2 {
		t.Errorf("planned %v, want the two runs of selftest-upgrade-all-at-once", dirs)
	}
}

func TestBenchKeepsRunsThatMeasuredSomething(t *testing.T) {
	incomplete := writeReport(t, &report.Report{Checks: []*report.Check{{Name: "create", Required: true, State: report.Passed}, {Name: "scale", Required: true, State: report.NotClaimed}}})
	setupFailed := writeReport(t, &report.Report{SetupFailure: "operator not ready"})
	ctx := context.Background()
	if err := benchRunUsable(ctx, 2, incomplete); err != nil {
		t.Errorf("incomplete run rejected: %v", err)
	}
	if err := benchRunUsable(ctx, 2, setupFailed); err == nil || !strings.Contains(err.Error(), "setup failed") {
		t.Errorf("setup failure: %v", err)
	}
	if err := benchRunUsable(ctx, -1, incomplete); err == nil {
		t.Error("a killed run was kept")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := benchRunUsable(cancelled, 1, incomplete); err == nil {
		t.Error("an interrupted benchmark went on")
	}
}
