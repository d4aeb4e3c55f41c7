// Package html renders a run's report as one self-contained report.html,
// written beside report.md: the verdict, the checks table and, for every
// traffic phase, a timeline of what the clients saw (requests per second,
// p50 and p99 latency per second, failed requests, the longest write
// gap), drawn from the recorded histories in the report dir, with what
// the cluster and the operator did meanwhile (the check's events) on a
// lane under it; under the rbac check, the requests the operator made,
// what it is granted beyond them and the minimal Role; under the cleanup
// check, what was left behind. It also renders the results page of
// several runs (WriteResults): the matrix of docs/results.md, with every
// timing that several runs measured compared as a bar chart.
//
// The charts are inline SVG laid out in Go and written with html/template;
// the page has no JavaScript and loads nothing. So it opens offline (a CI
// artifact, a copied report dir), there is no chart library to vendor,
// pin or audit, and the numbers it draws come from Go code that unit
// tests cover rather than from a script running in a browser.
package html

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// FileName is the page's name in the report dir.
const FileName = "report.html"

// templates are the pages' templates; common.html.tmpl holds what they
// share, checkfiles.html.tmpl report.html's sections of the rbac and
// cleanup checks' files.
//
//go:embed *.html.tmpl
var templates embed.FS

var pageTmpl = template.Must(template.ParseFS(templates, "report.html.tmpl", "common.html.tmpl", "checkfiles.html.tmpl"))

// Write renders the report of dir into dir/report.html.
func Write(dir string, rep *report.Report) error {
	var b bytes.Buffer
	if err := Render(&b, dir, rep); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FileName), b.Bytes(), 0o644)
}

// Render writes the page of a report whose files (histories,
// visualizations) are in dir. A history that is missing or unreadable is
// said so on the page: the page is still wanted, most of all then.
func Render(w io.Writer, dir string, rep *report.Report) error {
	p, err := newPage(dir, rep)
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, p)
}

type page struct {
	Profile, Verdict, VerdictLine, VerdictClass string
	// Capability is the capability level line (report.CapabilityLevel.Line).
	Capability        string
	Started, Duration string
	Environment       []field
	Memory            string
	SetupFailure      string
	SuiteFailures     []string
	Checks            []checkView
	// MaxEvents is how many events a check keeps.
	MaxEvents int
}

type field struct{ Name, Value string }

type checkView struct {
	Name, Anchor, State, StateClass, Duration, Reason string
	// Required marks a check the verdict counts; RequiredNotRun one that
	// makes the run INCOMPLETE by not running.
	Required, RequiredNotRun bool
	Timings                  []timingView
	Phases                   []phaseView
	Notes                    []string
	// EventsOnly is the timeline of the cluster's events of a check none
	// of whose traffic phases could place them; OtherEvents lists the
	// events outside every phase of a check whose phases could.
	EventsOnly    *eventsOnlyView
	OtherEvents   *eventTable
	EventsDropped int
	// RBAC and Cleanup are what the rbac and cleanup checks wrote beside
	// report.json (checkfiles.go).
	RBAC    *rbacView
	Cleanup []inventoryView
}

// HasDetails says whether the check gets a section below the table: its
// traffic phases, cluster events, files and notes (its timings are in the
// table).
func (c checkView) HasDetails() bool {
	return len(c.Phases) > 0 || len(c.Notes) > 0 || c.EventsOnly != nil || c.OtherEvents != nil || c.RBAC != nil || len(c.Cleanup) > 0
}

type timingView struct {
	Name, Value, Budget string
	OverBudget          bool
}

type phaseView struct {
	Name, Summary string
	// Failures are why validation failed the phase.
	Failures []string
	// Excused are the failures a leader change excused.
	Excused []string
	// History is the history file relative to the report dir; Problem
	// says why there is no timeline.
	History, Problem string
	// Visualization is porcupine's page, relative to the report dir;
	// VisualizationMissing is the name report.json gives when the file is
	// not there.
	Visualization, VisualizationMissing string
	Chart                               *chart
	FinalReads                          int
	// Events lists the cluster's events drawn on the chart's lane.
	Events *eventTable
}

func newPage(dir string, original *report.Report) (*page, error) {
	rep, err := withPathsTrimmed(dir, original)
	if err != nil {
		return nil, err
	}
	e := rep.Environment
	p := &page{Profile: rep.Profile, Verdict: string(rep.Verdict), VerdictLine: rep.VerdictLine, VerdictClass: verdictClass(rep.Verdict),
		Started: rep.Started.UTC().Format(time.RFC3339), Duration: seconds(rep.Duration, 0),
		SetupFailure: rep.SetupFailure, SuiteFailures: rep.SuiteFailures, MaxEvents: report.MaxEventsPerCheck,
		Environment: []field{{"Kubernetes", e.Kubernetes}, {"kind", e.Kind}, {"etcd", strings.Join(e.Etcd, " → ")}, {"operator", e.Operator}, {"suite", e.Suite}}}
	if rep.Capability != nil {
		p.Capability = rep.Capability.Line()
	}
	if u := rep.Operator; u != nil && u.Samples > 0 {
		p.Memory = fmt.Sprintf("peak RSS %.1f MiB, peak working set %.1f MiB (%d samples)", report.MiB(u.PeakRSSBytes), report.MiB(u.PeakWorkingSetBytes), u.Samples)
	}
	for _, c := range rep.Checks {
		p.Checks = append(p.Checks, newCheckView(dir, c))
	}
	return p, nil
}

// withPathsTrimmed is a copy of the report whose paths inside dir are
// relative to it, as `etcdproof results` shows them; the caller's report
// is left as it is.
func withPathsTrimmed(dir string, rep *report.Report) (*report.Report, error) {
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	out := &report.Report{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	out.TrimDir(abs)
	return out, nil
}

func newCheckView(dir string, c *report.Check) checkView {
	v := checkView{Name: c.Name, Anchor: "check-" + c.Name, State: c.State.Label(), StateClass: stateClass(c.State), Duration: seconds(c.Duration, 1),
		Reason: c.Reason(), Required: c.Required, Notes: c.Notes,
		RequiredNotRun: c.Required && (c.State == report.NotClaimed || c.State == report.NotSelected || c.State == report.Skipped)}
	for _, name := range slices.Sorted(maps.Keys(c.Timings)) {
		t := timingView{Name: name, Value: seconds(c.Timings[name], 2)}
		if b, ok := c.Budgets[name]; ok {
			t.Budget, t.OverBudget = seconds(b, 1), c.Timings[name] > b
		}
		v.Timings = append(v.Timings, t)
	}
	starts := map[string]time.Time{}
	for _, phase := range slices.Sorted(maps.Keys(c.Traffic)) {
		v.Phases = append(v.Phases, newPhaseView(dir, phase, c.Traffic[phase]))
		starts[phase] = c.Traffic[phase].Started
	}
	checkEvents(&v, c, starts)
	v.EventsDropped = c.EventsDropped
	addCheckFiles(&v, dir, c)
	return v
}

func newPhaseView(dir, phase string, t *report.Traffic) phaseView {
	v := phaseView{Name: phase, Failures: t.Failures, Excused: t.Excused, Summary: t.Summary()}
	if t.Visualization != "" {
		if _, rel, ok := locate(dir, t.Visualization); ok {
			v.Visualization = rel
		} else {
			v.VisualizationMissing = t.Visualization
		}
	}
	path, rel, ok := locate(dir, t.History)
	switch {
	case t.History == "":
		v.Problem = "report.json names no history file for this phase."
		return v
	case !ok:
		v.Problem = fmt.Sprintf("history file %s is missing from the report dir: no timeline.", t.History)
		return v
	}
	v.History = rel
	h, err := history.ReadFile(path)
	if err != nil {
		v.Problem = fmt.Sprintf("history file %s could not be read: %v", rel, err)
		return v
	}
	tl := NewTimeline(h)
	v.FinalReads = tl.FinalReads
	if v.Chart = newChart(tl); v.Chart == nil {
		v.Problem = fmt.Sprintf("history file %s holds no request but the final reads: no timeline.", rel)
	}
	return v
}

// verdictClass is the CSS class that colours a verdict.
func verdictClass(v report.Verdict) string { return strings.ToLower(string(v)) }

// stateClass is the CSS class that colours a state.
func stateClass(s report.State) string {
	switch s {
	case report.Passed, report.Failed, report.Incomplete:
		return string(s)
	}
	return "not-run"
}

func seconds(ms report.Millis, decimals int) string {
	return fmt.Sprintf("%.*f s", decimals, float64(ms)/1000)
}
