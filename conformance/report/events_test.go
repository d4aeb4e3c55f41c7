package report

import (
	"path/filepath"
	"testing"
	"time"
)

// Events come from several watches; the report lists them in time order
// and keeps them through report.json.
func TestRecorderKeepsEventsInTimeOrderThroughReportJSON(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 8, 22, 31, 0, time.UTC)
	rec := NewRecorder()
	rec.Event("replace", Event{Time: t0.Add(2 * time.Second), Source: SourcePod, Object: "pod/a", Reason: "Deleted", Level: LevelNormal})
	rec.Event("replace", Event{Time: t0, Source: SourceEvent, Object: "pod/a", Reason: "Killing", Message: "Stopping container etcd", Level: LevelNormal})
	rec.Event("replace", Event{Time: t0.Add(2 * time.Second), Source: SourcePod, Object: "pod/b", Reason: "Created", Level: LevelNormal})
	rec.Event("replace", Event{Time: t0.Add(time.Second), Source: SourceEvent, Object: "pod/b", Reason: "Unhealthy", Level: LevelWarning})

	rep := &Report{SchemaVersion: SchemaVersion, Checks: rec.Checks(nil)}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range back.Checks[0].Events {
		got = append(got, e.Object+" "+e.Reason)
	}
	// Same time: the order they were seen in.
	want := []string{"pod/a Killing", "pod/b Unhealthy", "pod/a Deleted", "pod/b Created"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
	if e := back.Checks[0].Events[1]; e.Level != LevelWarning || e.Source != SourceEvent || !e.Time.Equal(t0.Add(time.Second)) {
		t.Errorf("event lost data: %+v", e)
	}
}

func TestRecorderCapsEventsPerCheckAndCountsTheRest(t *testing.T) {
	rec := NewRecorder()
	t0 := time.Unix(0, 0)
	for i := range MaxEventsPerCheck + 7 {
		rec.Event("upgrade", Event{Time: t0.Add(time.Duration(i) * time.Millisecond), Source: SourcePod, Object: "pod/a", Reason: "Restarted"})
	}
	c := rec.Check("upgrade")
	if len(c.Events) != MaxEventsPerCheck || c.EventsDropped != 7 {
		t.Errorf("kept %d, dropped %d; want %d and 7", len(c.Events), c.EventsDropped, MaxEventsPerCheck)
	}
	if last := c.Events[len(c.Events)-1].Time; !last.Equal(t0.Add((MaxEventsPerCheck - 1) * time.Millisecond)) {
		t.Errorf("the last kept event is at %s: the first ones must be kept", last)
	}
}
