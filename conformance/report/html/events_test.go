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

// A phase's events are drawn on its lane at their time since the phase
// started and listed under it; the check's other events get a table of
// their own; a check without a phase that can place events gets an
// events-only timeline from its start.
func TestEventsAreDrawnOnTheTimelineOfTheirPhase(t *testing.T) {
	dir := t.TempDir()
	writeSmallHistory(t, dir, "replace/history-replace.jsonl")
	checkStart := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	phaseStart := checkStart.Add(10 * time.Second)
	at := func(from time.Time, seconds float64) time.Time {
		return from.Add(time.Duration(seconds * float64(time.Second)))
	}
	rec := report.NewRecorder()
	rec.Traffic("replace", "replace", phaseStart, validate.Result{Linearizability: validate.Linearizable}, "replace/history-replace.jsonl")
	for _, ev := range []report.Event{
		{Time: at(checkStart, 2), Source: report.SourcePod, Object: "pod/replace-a", Reason: "Ready", Level: report.LevelNormal},
		{Time: at(phaseStart, 1.5), Source: report.SourcePod, Object: "pod/replace-a", Reason: "Deleted", Level: report.LevelNormal},
		{Time: at(phaseStart, 2), Source: report.SourceEvent, Object: "pod/replace-b", Reason: "Unhealthy", Message: "Readiness probe failed <503>", Level: report.LevelWarning},
		{Time: at(phaseStart, 30), Source: report.SourceOperator, Object: "pod/etcd-operator-1", Reason: "Restarted", Level: report.LevelWarning},
	} {
		rec.Event("replace", ev)
	}
	rec.Event("create", report.Event{Time: at(checkStart, -60+3), Source: report.SourcePod, Object: "pod/create-a", Reason: "Created", Level: report.LevelNormal})
	rec.Event("create", report.Event{Time: at(checkStart, -60+7.5), Source: report.SourceEtcd, Object: "etcdcluster/create", Reason: "Members", Message: "members create-a", Level: report.LevelNormal})
	rec.Check("create").Started, rec.Check("create").Duration = checkStart.Add(-time.Minute), report.Ms(9500*time.Millisecond)
	rec.Check("replace").Started = checkStart
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: "reference", Checks: rec.Checks([]string{"create", "replace"})}
	rep.Judge()

	p, err := newPage(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	create, replace := p.Checks[0], p.Checks[1]

	phase := replace.Phases[0]
	lane := phase.Chart.Events
	// smallHistory spans 4 s over the plot's 880 units: 220 a second.
	if lane == nil || len(lane.Normal) != 1 || len(lane.Warning) != 1 || !near(lane.Normal[0].X, plotLeft+1.5*220) || !near(lane.Warning[0].X, plotLeft+2*220) {
		t.Fatalf("phase lane = %+v", lane)
	}
	if title := lane.Warning[0].Title; title != "2.00 s · event pod/replace-b · Unhealthy: Readiness probe failed <503>" {
		t.Errorf("tick title %q", title)
	}
	if phase.Chart.Height != chartHeight+laneGap || phase.Chart.XLabelY != xLabelY+laneGap {
		t.Errorf("the axis was not moved under the lane: %+v", phase.Chart)
	}
	if phase.Events == nil || len(phase.Events.Rows) != 2 || phase.Events.Rows[0].At != "1.50 s" || !phase.Events.Rows[1].Warning || !phase.Events.Open {
		t.Errorf("phase table = %+v", phase.Events)
	}
	if o := replace.OtherEvents; o == nil || len(o.Rows) != 2 || o.Rows[0].At != "2.00 s" || o.Rows[1].At != "40.00 s" || o.Rows[1].Source != "operator" {
		t.Errorf("events outside the phase = %+v", o)
	}
	if replace.EventsOnly != nil {
		t.Error("a check whose phase places its events got an events-only timeline too")
	}

	only := create.EventsOnly
	if only == nil || create.OtherEvents != nil || !create.HasDetails() {
		t.Fatalf("create: events-only %+v, other %+v", only, create.OtherEvents)
	}
	// 9.5 s of check, rounded up to 10 s over 880 units.
	if c := only.Chart; c.Seconds != 10 || len(c.Lane.Normal) != 2 || !near(c.Lane.Normal[0].X, plotLeft+3*88) || !near(c.Lane.Normal[1].X, plotLeft+7.5*88) ||
		c.AxisTitle != "seconds since the check started" {
		t.Errorf("events-only chart = %+v, lane %+v", c, c.Lane)
	}
	if rows := only.Table.Rows; len(rows) != 2 || rows[1].At != "7.50 s" || rows[1].Reason != "Members" {
		t.Errorf("events-only table = %+v", rows)
	}

	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		`<line class="event warning"`,
		`<title>2.00 s · event pod/replace-b · Unhealthy: Readiness probe failed &lt;503&gt;</title>`,
		`<svg class="events-timeline" data-seconds="10"`,
		`<div class="events-only" data-check="create">`,
		`2 cluster events during this phase (seconds since the phase started)`,
		`2 cluster events outside the traffic phases (seconds since the check started)`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A phase recorded by a traffic image that did not say when it started
// cannot place events: the check gets an events-only timeline instead, and
// the check's start is its zero.
func TestEventsOfPhasesWithoutAStartGetTheirOwnTimeline(t *testing.T) {
	dir := t.TempDir()
	writeSmallHistory(t, dir, "history.jsonl")
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	c := &report.Check{Name: "upgrade", Started: start, Duration: report.Ms(2 * time.Second),
		Traffic: map[string]*report.Traffic{"to-3.6": {History: "history.jsonl"}},
		Events:  []report.Event{{Time: start.Add(5 * time.Second), Source: report.SourcePod, Object: "pod/u", Reason: "Restarted", Level: report.LevelWarning}}}
	v := newCheckView(dir, c)
	if v.Phases[0].Chart == nil || v.Phases[0].Chart.Events != nil || v.EventsOnly == nil {
		t.Fatalf("phase chart %+v, events-only %+v", v.Phases[0].Chart, v.EventsOnly)
	}
	// The event is after the check's recorded end: the axis reaches it.
	if ch := v.EventsOnly.Chart; ch.Seconds != 5 || len(ch.Lane.Warning) != 1 || !near(ch.Lane.Warning[0].X, plotRight) {
		t.Errorf("events-only chart = %+v", ch)
	}
}
