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
	rec.Traffic("upgrade", "upgrade", validate.Result{Linearizability: validate.Linearizable, Stats: validate.Stats{Puts: 10, Gets: 12, LongestWriteGap: 1500 * time.Millisecond, LatencyP99: 40 * time.Millisecond}}, "upgrade/history-upgrade.jsonl")
	rec.Check("create").State = "passed"
	rec.Check("replace").State = "failed"
	rec.Check("replace").Failure = "stale member: 9 | still listed"
	rep := &Report{SchemaVersion: SchemaVersion, Profile: "reference", Started: time.Unix(0, 0), Checks: rec.Checks([]string{"create", "replace", "upgrade"})}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Checks[1].Timings["mttr-leader"] != 25300 || back.Checks[2].Traffic["upgrade"].Operations != 22 {
		t.Errorf("round trip lost data: %+v", back.Checks)
	}
	md := back.Markdown()
	for _, want := range []string{"# etcdproof: reference — FAIL", "| replace | failed |", `stale member: 9 \| still listed`, "mttr-leader: 25.30 s (budget 180.0 s)", "linearizable, 22 ops", "longest write gap 1.50 s"} {
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
