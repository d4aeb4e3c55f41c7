package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
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
	failed := &profile.Profile{Name: "bad-rbac", Selftest: &profile.Expectation{Check: "rbac", Reason: "dangerous grant"}}
	unreadable := &profile.Profile{Name: "unreadable", Selftest: &profile.Expectation{Check: "rbac", Reason: "cannot read the audit log", State: profile.ExpectIncomplete, AuditLog: profile.AuditLogUnreadable}}
	rbacFailed := writeReport(t, &report.Report{Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Failed, Failure: "dangerous grant: secrets list"}}})
	rbacIncomplete := writeReport(t, &report.Report{Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Incomplete, Incomplete: "cannot read the audit log /r/no-such-dir/audit.log: open: no such file"}}})
	setupFailed := writeReport(t, &report.Report{SetupFailure: "operator not ready", Checks: []*report.Check{{Name: "rbac", Required: true, State: report.Incomplete, Incomplete: "setup failed: operator not ready"}}})
	for _, tc := range []struct {
		name   string
		p      *profile.Profile
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
		{"incomplete for another reason", &profile.Profile{Name: "x", Selftest: &profile.Expectation{Check: "rbac", Reason: "no request by", State: profile.ExpectIncomplete}}, rbacIncomplete, 2, "for another reason"},
		{"no report", unreadable, filepath.Join(t.TempDir(), "report.json"), 2, "no such file"},
	} {
		err := judgeSelftest(tc.p, tc.report, tc.code)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
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
