package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The tests run in the package folder; profiles and config are two levels up.
const repoConformance = "../.."

func TestParseRunRejectsBadFlagsWithClearErrors(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{args: nil, want: []string{"--profile is required"}},
		{args: []string{"--profile", "no-such-operator", "--profiles-dir", repoConformance + "/profiles"}, want: []string{`no profile "no-such-operator"`, "no-such-operator.yaml does not exist", "coreos-v0.9.4", "reference"}},
		{args: []string{"--profile", "reference", "--profiles-dir", repoConformance + "/profiles", "--config", "missing.yaml"}, want: []string{"--config: missing.yaml does not exist"}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "--label-filter", "create && (scale"}, want: []string{"--label-filter"}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "--label-filter", "create || speed"}, want: []string{`unknown label "speed"`, strings.Join(profile.CheckLabels, ", ")}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "--timeout", "-1s"}, want: []string{"--timeout must be positive"}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "--require", "create,speed"}, want: []string{`--require "create,speed": unknown check "speed"`}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "--require", ""}, want: []string{"names no check"}},
		{args: []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml", "extra"}, want: []string{`unexpected arguments: ["extra"]`}},
		{args: []string{"--no-such-flag"}, want: []string{"flag provided but not defined"}},
	}
	for _, tc := range cases {
		_, err := parseRun(tc.args, io.Discard)
		if err == nil {
			t.Errorf("%q: accepted", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", tc.args, err, w)
			}
		}
	}
}

func TestParseRunAcceptsGoodFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parseRun([]string{"--profile", "reference", "--profiles-dir", repoConformance + "/profiles", "--config", repoConformance + "/config/suite.yaml",
		"--label-filter", "create || (scale && !upgrade)", "--report-dir", filepath.Join(dir, "r")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// A name with dots is still a name, not a file.
	if _, err := parseRun([]string{"--profile", "coreos-v0.9.4", "--profiles-dir", repoConformance + "/profiles", "--config", repoConformance + "/config/suite.yaml"}, io.Discard); err != nil {
		t.Errorf("profile name with dots: %v", err)
	}
	if o.ProfilePath != filepath.Join(repoConformance, "profiles", "reference.yaml") || !filepath.IsAbs(o.Framework.ReportDir) || o.Require != nil {
		t.Errorf("options = %+v", o)
	}
}

// An unreadable audit log is the rbac check's business (INCOMPLETE, with
// the path and the error), not a flag error; the run warns up front.
func TestParseRunLeavesAnUnreadableAuditLogToTheRBACCheck(t *testing.T) {
	var stderr strings.Builder
	base := []string{"--profile", repoConformance + "/profiles/reference.yaml", "--config", repoConformance + "/config/suite.yaml"}
	o, err := parseRun(append(base, "--audit-log", "/does/not/exist", "--require", "create,rbac"), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.Framework.AuditLog != "/does/not/exist" || strings.Join(o.Require, ",") != "create,rbac" {
		t.Errorf("options = %+v", o)
	}
	if !strings.Contains(stderr.String(), "/does/not/exist") || !strings.Contains(stderr.String(), "the rbac check will be INCOMPLETE") {
		t.Errorf("no warning: %q", stderr.String())
	}
	stderr.Reset()
	if _, err := parseRun(append(base, "--label-filter", "create"), &stderr); err != nil || stderr.Len() > 0 {
		t.Errorf("rbac not selected: err %v, warning %q", err, stderr.String())
	}
}

func TestParseTrafficNamesBadFlags(t *testing.T) {
	_, _, err := parseTraffic([]string{"--clients", "0", "--rate", "0"})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{"endpoints: at least one", "clients: must be at least 1", "rate: must be at least 1"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestValidateCommandExitCodes(t *testing.T) {
	for file, want := range map[string]int{"linearizable.jsonl": 0, "stale-read.jsonl": 1, "lost-write.jsonl": 1, "final-read-failed.jsonl": 2,
		// Kept histories with watch records are judged on their streams too.
		"watch-gap.jsonl": 1, "watch-compacted.jsonl": 0} {
		stdout := os.Stdout
		os.Stdout, _ = os.Open(os.DevNull)
		got := validateCmd([]string{"--history", filepath.Join(repoConformance, "validate", "testdata", file)})
		os.Stdout = stdout
		if got != want {
			t.Errorf("%s: exit %d, want %d", file, got, want)
		}
	}
	if got := validateCmd(nil); got != 2 {
		t.Errorf("no --history: exit %d, want 2", got)
	}
}

// A kept etcd 3.4 hop is judged again with the member stops its report
// lists: the closed-connection failure is excused at the stop it was in
// flight at, and counts away from every stop.
func TestValidateCommandTakesTheUndrainedStops(t *testing.T) {
	file := filepath.Join(repoConformance, "validate", "testdata", "undrained-stop.jsonl")
	for stops, want := range map[string]int{"10s": 0, "3s,30s": 1, "": 1} {
		args := []string{"--history", file, "--client-errors", "after-retry"}
		if stops != "" {
			args = append(args, "--undrained-stop-at", stops)
		}
		stdout := os.Stdout
		os.Stdout, _ = os.Open(os.DevNull)
		got := validateCmd(args)
		os.Stdout = stdout
		if got != want {
			t.Errorf("--undrained-stop-at %q: exit %d, want %d", stops, got, want)
		}
	}
}

// The traffic pod watches as informers do unless told otherwise: the
// suite's checks judge watch streams without passing a flag.
func TestParseTrafficWatchesByDefault(t *testing.T) {
	cfg, _, err := parseTraffic([]string{"--endpoints", "http://c-client.ns.svc:2379"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Watchers != 2 || cfg.WatchResumeEvery != 5*time.Second {
		t.Errorf("watchers %d resuming every %s, want 2 every 5s", cfg.Watchers, cfg.WatchResumeEvery)
	}
	cfg, _, err = parseTraffic([]string{"--endpoints", "http://c-client.ns.svc:2379", "--watchers", "0"})
	if err != nil || cfg.Watchers != 0 {
		t.Errorf("--watchers 0: %d watchers, %v", cfg.Watchers, err)
	}
}
