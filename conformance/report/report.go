// Package report holds the run's results in a stable JSON schema and
// renders the Markdown summary. JUnit XML comes from Ginkgo's reporter.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

// SchemaVersion changes whenever a field changes meaning or disappears.
// v2: typed check states (incomplete, notClaimed, notSelected), required
// checks, the verdict and its counts. Fields added later are optional and
// keep v2: a reader that does not know them ignores them, and a report
// without them still reads (a check's started, events and eventsDropped,
// a traffic phase's started).
const SchemaVersion = "etcdproof.report/v2"

// Report is report.json.
type Report struct {
	SchemaVersion string    `json:"schemaVersion"`
	Profile       string    `json:"profile"`
	Started       time.Time `json:"started"`
	Duration      Millis    `json:"durationMs"`
	// Verdict, VerdictLine, Counts and Passed are set by Judge.
	Verdict Verdict `json:"verdict"`
	// VerdictLine is what the terminal and report.md print: "PASS (6/6)".
	VerdictLine string `json:"verdictLine"`
	Counts      Counts `json:"counts"`
	// Passed is Verdict == PASS.
	Passed bool `json:"passed"`
	// SetupFailure is why the operator could not be installed or started.
	SetupFailure string `json:"setupFailure,omitempty"`
	// SuiteFailures are failures outside any check (interrupt, suite
	// timeout, reporting); they make the run incomplete.
	SuiteFailures []string    `json:"suiteFailures,omitempty"`
	Environment   Environment `json:"environment"`
	// Operator is absent when the profile names no operator Deployment.
	Operator *OperatorUsage `json:"operator,omitempty"`
	Checks   []*Check       `json:"checks"`
	// Capability is the Operator Framework capability level the run
	// proved (ProveCapability), beside the one the profile declares.
	Capability *CapabilityLevel `json:"capability,omitempty"`
	// Floor is what the same member pods took with no operator (etcdproof
	// run --floor): timings named like the checks', nothing judged.
	Floor *Check `json:"floor,omitempty"`
}

// OperatorUsage is the operator's memory, sampled from install to uninstall
// through the kubelet's summary API and summed over its pods.
type OperatorUsage struct {
	PeakRSSBytes        uint64 `json:"peakRSSBytes"`
	PeakWorkingSetBytes uint64 `json:"peakWorkingSetBytes"`
	Samples             int    `json:"samples"`
}

// Environment fingerprints what was tested.
type Environment struct {
	Kubernetes string   `json:"kubernetes"`
	Kind       string   `json:"kind,omitempty"`
	Etcd       []string `json:"etcd"`
	Operator   string   `json:"operator"`
	Suite      string   `json:"suite"`
}

// Check is one check's outcome.
type Check struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Required checks must pass for the run to pass (--require).
	Required bool `json:"required"`
	// Failure is why a failed check failed.
	Failure string `json:"failure,omitempty"`
	// Incomplete is what an incomplete check could not observe, and why.
	Incomplete string `json:"incompleteReason,omitempty"`
	// Skipped is why a check did not run (not claimed, not selected, skipped).
	Skipped string `json:"skipReason,omitempty"`
	// Started is when the check's spec began (zero in older reports).
	Started  time.Time           `json:"started,omitzero"`
	Duration Millis              `json:"durationMs"`
	Timings  map[string]Millis   `json:"timingsMs,omitempty"`
	Budgets  map[string]Millis   `json:"budgetsMs,omitempty"`
	Traffic  map[string]*Traffic `json:"traffic,omitempty"`
	Notes    []string            `json:"notes,omitempty"`
	// Events are what the cluster and the operator did while the check
	// ran, in time order, at most MaxEventsPerCheck of them; EventsDropped
	// counts those beyond.
	Events        []Event `json:"events,omitempty"`
	EventsDropped int     `json:"eventsDropped,omitempty"`
}

// Traffic is the validated history of one traffic phase.
type Traffic struct {
	// Started is the wall-clock time of the history's zero, when the
	// traffic process started its recorder; it places the check's Events
	// on the phase's timeline. Zero when the traffic image predates it.
	Started         time.Time                `json:"started,omitzero"`
	Linearizability validate.Linearizability `json:"linearizability"`
	Operations      int                      `json:"operations"`
	FailedPuts      int                      `json:"failedPuts"`
	FailedGets      int                      `json:"failedGets"`
	// DefiniteFailures were not applied; IndeterminateFailures may have
	// been. FailuresAfterRetry is what a client retrying definite failures
	// once would have seen fail, leaving out the DuringLeaderChange
	// indeterminate failures, which etcd causes whatever the operator does.
	DefiniteFailures      int `json:"definiteFailures"`
	IndeterminateFailures int `json:"indeterminateFailures"`
	FailuresAfterRetry    int `json:"failuresAfterRetry"`
	DuringLeaderChange    int `json:"duringLeaderChange"`
	// LeaderChanges counts the higher raft terms the clients saw; Excused
	// lists each failure a leader change excused, with the change.
	LeaderChanges int      `json:"leaderChanges"`
	Excused       []string `json:"excused,omitempty"`
	// PrunedPuts are failed puts left out of the linearizability check.
	PrunedPuts int `json:"prunedPuts"`
	LostWrites int `json:"lostWrites"`
	// UnverifiedKeys were written but never read back at the end.
	UnverifiedKeys  int      `json:"unverifiedKeys"`
	LongestWriteGap Millis   `json:"longestWriteGapMs"`
	LatencyP50      Millis   `json:"latencyP50Ms"`
	LatencyP99      Millis   `json:"latencyP99Ms"`
	Failures        []string `json:"failures,omitempty"`
	History         string   `json:"history"`
	Visualization   string   `json:"visualization,omitempty"`
	// Watch counts what the phase's watchers saw; nil when it ran none.
	Watch *validate.WatchStats `json:"watch,omitempty"`
}

// Summary is the phase in one line, as every report format shows it.
func (t *Traffic) Summary() string {
	return fmt.Sprintf("%s, %d ops, failed puts %d, failed gets %d (definite %d, indeterminate %d, %d excused by %d leader change(s), %d after one retry), lost writes %d, longest write gap %.2f s, p50 %.1f ms, p99 %.1f ms",
		t.Linearizability, t.Operations, t.FailedPuts, t.FailedGets, t.DefiniteFailures, t.IndeterminateFailures, t.DuringLeaderChange, t.LeaderChanges, t.FailuresAfterRetry,
		t.LostWrites, float64(t.LongestWriteGap)/1000, float64(t.LatencyP50), float64(t.LatencyP99)) + t.watchSummary()
}

func (t *Traffic) watchSummary() string {
	if t.Watch == nil {
		return ""
	}
	w := t.Watch
	return fmt.Sprintf("; watch: %d watchers, %d events, %d resumes, %d told of a compaction, %d violations",
		w.Watchers, w.Events, w.Resumes, w.Compactions, w.Violations)
}

// Millis is a duration in milliseconds, with three decimals.
type Millis float64

// Ms converts a duration.
func Ms(d time.Duration) Millis { return Millis(float64(d.Microseconds()) / 1000) }

// WriteJSON writes report.json.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadJSON reads a report.json.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schemaVersion %q, this binary reads %q: rerun the checks with this binary", path, rep.SchemaVersion, SchemaVersion)
	}
	return rep, nil
}
