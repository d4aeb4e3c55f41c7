package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

func TestReportRoundTripAndMarkdown(t *testing.T) {
	rec := NewRecorder()
	rec.Timing("replace", "mttr-leader", 25300*time.Millisecond, 3*time.Minute)
	rec.Traffic("upgrade", "upgrade", time.Time{}, validate.Result{Linearizability: validate.Linearizable, Stats: validate.Stats{Puts: 10, Gets: 12, LongestWriteGap: 1500 * time.Millisecond, LatencyP99: 40 * time.Millisecond}}, "upgrade/history-upgrade.jsonl")
	rec.Check("create").State = Passed
	rec.Check("replace").State = Failed
	rec.Check("replace").Failure = "stale member: 9 | still listed"
	rec.Incomplete("upgrade", "no traffic pod: %s", "image missing")
	rec.NotClaimed("scale", "profile does not claim scaleUp")
	rep := &Report{SchemaVersion: SchemaVersion, Profile: "reference", Started: time.Unix(0, 0), Checks: rec.Checks([]string{"create", "replace", "upgrade", "scale"})}
	for _, c := range rep.Checks {
		c.Required = c.Name != "scale"
	}
	rep.Checks = append(rep.Checks, &Check{Name: "rbac", Required: true, State: NotSelected, Skipped: "not selected by --label-filter"})
	rep.Judge()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Checks[1].Timings["mttr-leader"] != 25300 || back.Checks[2].Traffic["upgrade"].Operations != 22 || back.Checks[2].State != Incomplete ||
		back.Verdict != VerdictFail || back.Counts != (Counts{Required: 4, RequiredPassed: 1, Passed: 1, Failed: 1, Incomplete: 1, NotClaimed: 1, NotSelected: 1}) {
		t.Errorf("round trip lost data: %+v %+v", back, back.Checks)
	}
	md := back.Markdown()
	for _, want := range []string{"# etcdproof: reference — FAIL", "**FAIL (1/4: replace failed; upgrade could not run: no traffic pod: image missing; rbac is required but --label-filter left it out)**",
		"| rbac | **not selected (required)** |",
		"| replace | **failed** |", `stale member: 9 \| still listed`, "| upgrade | **INCOMPLETE** | 0.0 s | no traffic pod: image missing |",
		"| scale | not claimed | 0.0 s | profile does not claim scaleUp |", "mttr-leader: 25.30 s (budget 180.0 s)", "linearizable, 22 ops", "longest write gap 1.50 s"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestReadJSONRejectsOtherSchemas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := (&Report{SchemaVersion: "other/v9"}).WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(path); err == nil || !strings.Contains(err.Error(), "other/v9") {
		t.Errorf("error = %v", err)
	}
}

func TestRecorderKeepsEveryIncompleteReason(t *testing.T) {
	rec := NewRecorder()
	rec.Incomplete("cleanup", "inventory: %v", "discovery failed")
	rec.Incomplete("cleanup", "leftovers unknown")
	if c := rec.Check("cleanup"); c.State != Incomplete || c.Reason() != "inventory: discovery failed; leftovers unknown" {
		t.Errorf("check = %+v", c)
	}
}

// A phase with watchers keeps their counts in the report and says them in
// its summary; a phase without says nothing of watches.
func TestTrafficPhaseCarriesWatchCounts(t *testing.T) {
	rec := NewRecorder()
	watched := validate.Result{Linearizability: validate.Linearizable, Stats: validate.Stats{Puts: 20, Gets: 20},
		Watch: &validate.WatchResult{Stats: validate.WatchStats{Watchers: 2, Streams: 2, Resumes: 6, Events: 40, Compactions: 1}}}
	rec.Traffic("scale", "scale", time.Time{}, watched, "scale/history-scale.jsonl")
	rec.Traffic("scale", "old", time.Time{}, validate.Result{Linearizability: validate.Linearizable}, "scale/history-old.jsonl")
	rep := &Report{SchemaVersion: SchemaVersion, Profile: "reference", Started: time.Unix(0, 0), Checks: rec.Checks([]string{"scale"})}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	phases := back.Checks[0].Traffic
	if w := phases["scale"].Watch; w == nil || *w != watched.Watch.Stats {
		t.Errorf("watch counts read back as %+v, want %+v", w, watched.Watch.Stats)
	}
	if got := phases["scale"].Summary(); !strings.Contains(got, "watch: 2 watchers, 40 events, 6 resumes, 1 told of a compaction, 0 violations") {
		t.Errorf("summary %q does not give the watch counts", got)
	}
	if phases["old"].Watch != nil || strings.Contains(phases["old"].Summary(), "watch") {
		t.Errorf("a phase without watchers reports watches: %q", phases["old"].Summary())
	}
}
