package report

import (
	"strings"
	"testing"
	"time"
)

func TestMatrixPutsRunsSideBySideWithReasons(t *testing.T) {
	checks := []string{"create", "replace", "rbac"}
	ref := &Report{Profile: "reference", Environment: Environment{Kubernetes: "v1.34.4"},
		Operator: &OperatorUsage{PeakRSSBytes: 30 << 20, Samples: 4},
		Checks:   []*Check{{Name: "create", State: Passed, Duration: 6500}, {Name: "replace", State: Passed, Duration: 40000}, {Name: "rbac", State: Passed}}}
	old := &Report{Profile: "coreos-v0.9.4", Environment: Environment{Kubernetes: "v1.16.15"},
		Checks: []*Check{{Name: "create", State: Passed, Duration: 37000, Notes: []string{"profile workaround: 1 object", "ignored detail"}}, {Name: "replace", State: Failed, Failure: "member | gone", Notes: []string{"pod x restarted"}}, {Name: "rbac", State: Skipped, Skipped: "no audit log"}}}
	coreos := &Report{Profile: "coreos-v0.9.4", Environment: Environment{Kubernetes: "v1.34.4"},
		Checks: []*Check{{Name: "create", State: Passed, Duration: 37000}}}
	aenix := &Report{Profile: "aenix-v0.4.5", Environment: Environment{Kubernetes: "v1.34.4"},
		Checks: []*Check{{Name: "create", State: Passed, Duration: 9000}, {Name: "replace", State: NotClaimed, Skipped: "profile does not claim deadMemberReplacement"}, {Name: "rbac", State: Incomplete, Incomplete: "cannot open the audit log: open /x/audit.log: no such file or directory"}}}
	for _, r := range []*Report{ref, old, coreos, aenix} {
		for _, c := range r.Checks {
			c.Required = true
		}
		r.Judge()
	}
	ref.Capability = &CapabilityLevel{Declared: "Full Lifecycle"}
	md := Matrix([]*Report{old, coreos, ref, aenix}, checks)
	for _, want := range []string{
		// Newest Kubernetes first, then by profile.
		"| check | aenix-v0.4.5 on v1.34.4 | coreos-v0.9.4 on v1.34.4 | reference on v1.34.4 | coreos-v0.9.4 on v1.16.15 |",
		"| create | pass (9.0 s) | pass (37.0 s) | pass (6.5 s) | pass (37.0 s) |",
		"| replace | not claimed | not run | pass (40.0 s) | **fail** |",
		"| rbac | **INCOMPLETE** | not run | pass (0.0 s) | skipped |",
		"| **verdict** | **INCOMPLETE** (1/3) | **PASS** (1/1) | **PASS** (3/3) | **FAIL** (1/3) |",
		// Proven from the column's checks (create, rbac and cleanup for
		// level 1: no cleanup here), beside what the CSV declares.
		"| **capability level** | none proven | none proven | none proven (declares 3 Full Lifecycle) | none proven |",
		"- **replace not claimed**: profile does not claim deadMemberReplacement",
		"- **rbac INCOMPLETE**: cannot open the audit log: open /x/audit.log: no such file or directory",
		`- **replace failed**: member \| gone`,
		"- **replace failed**, note: pod x restarted",
		"- **create passed**, note: profile workaround: 1 object",
		"- **rbac skipped**: no audit log",
		"Operator peak RSS 30.0 MiB.",
		"### reference on v1.34.4\n\nKubernetes v1.34.4",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix lacks %q:\n%s", want, md)
		}
	}
}

func TestTrimDirMakesReportPathsRelative(t *testing.T) {
	r := &Report{Checks: []*Check{{Name: "upgrade", Failure: "2 errors (history /x/rep/upgrade/h.jsonl)",
		Traffic: map[string]*Traffic{"upgrade": {History: "/x/rep/upgrade/h.jsonl", Failures: []string{"see /x/rep/upgrade/h.jsonl"}}}}}}
	r.TrimDir("/x/rep")
	c := r.Checks[0]
	if c.Failure != "2 errors (history upgrade/h.jsonl)" || c.Traffic["upgrade"].History != "upgrade/h.jsonl" || c.Traffic["upgrade"].Failures[0] != "see upgrade/h.jsonl" {
		t.Errorf("paths not relative: %+v %+v", c, c.Traffic["upgrade"])
	}
}

// TestMergeRunsJoinsANodesRunIntoItsProfilesColumn: the node checks run on
// their own cluster; the results matrix shows them in the profile's column,
// judged together with the rest.
func TestMergeRunsJoinsANodesRunIntoItsProfilesColumn(t *testing.T) {
	day := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	main := &Report{Profile: "reference", Started: day, Duration: 500000, Environment: Environment{Kubernetes: "v1.34.4", Etcd: []string{"3.5.21"}},
		Operator: &OperatorUsage{PeakRSSBytes: 20 << 20, Samples: 9},
		Checks: []*Check{{Name: "create", State: Passed, Required: true}, {Name: "node-loss", State: NotSelected, Required: true, Skipped: "not selected by --label-filter"},
			{Name: "drain", State: NotSelected, Required: true, Skipped: "not selected by --label-filter"}}}
	nodes := &Report{Profile: "reference", Started: day.Add(time.Hour), Duration: 300000, Environment: Environment{Kubernetes: "v1.34.4"},
		Operator: &OperatorUsage{PeakRSSBytes: 25 << 20, Samples: 3},
		Checks: []*Check{{Name: "create", State: NotSelected, Required: true}, {Name: "node-loss", State: Passed, Required: true, Duration: 90000},
			{Name: "drain", State: Failed, Required: true, Failure: "2 voters left"}}}
	other := &Report{Profile: "coreos-v0.9.4", Environment: Environment{Kubernetes: "v1.34.4"}, Checks: []*Check{{Name: "create", State: Passed, Required: true}}}
	for _, r := range []*Report{main, nodes, other} {
		r.Judge()
	}
	merged := MergeRuns([]*Report{main, other, nodes})
	if len(merged) != 2 || merged[1] != other {
		t.Fatalf("want the reference column merged and coreos' kept as it is, got %d columns", len(merged))
	}
	ref := merged[0]
	states := map[string]State{}
	for _, c := range ref.Checks {
		states[c.Name] = c.State
	}
	if states["create"] != Passed || states["node-loss"] != Passed || states["drain"] != Failed {
		t.Errorf("merged states %v: want create and node-loss passed, drain failed", states)
	}
	if ref.Verdict != VerdictFail || ref.Counts.Required != 3 || ref.Counts.RequiredPassed != 2 {
		t.Errorf("merged verdict %s %+v: want FAIL with 2 of 3 required passed", ref.Verdict, ref.Counts)
	}
	if ref.Duration != 800000 || ref.Operator.PeakRSSBytes != 25<<20 || !ref.Started.Equal(day) || ref.Environment.Etcd[0] != "3.5.21" {
		t.Errorf("merged run: duration %v, peak %d, started %v, etcd %v", ref.Duration, ref.Operator.PeakRSSBytes, ref.Started, ref.Environment.Etcd)
	}
	if main.Verdict != VerdictIncomplete || nodes.Checks[1].State != Passed {
		t.Errorf("the runs themselves changed: %s", main.Verdict)
	}
}
