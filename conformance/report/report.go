// Package report holds the run's results in a stable JSON schema and
// renders the Markdown summary. JUnit XML comes from Ginkgo's reporter.
package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

// SchemaVersion changes whenever a field changes meaning or disappears.
// v2: typed check states (incomplete, notClaimed, notSelected), required
// checks, the verdict and its counts.
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
	Skipped  string              `json:"skipReason,omitempty"`
	Duration Millis              `json:"durationMs"`
	Timings  map[string]Millis   `json:"timingsMs,omitempty"`
	Budgets  map[string]Millis   `json:"budgetsMs,omitempty"`
	Traffic  map[string]*Traffic `json:"traffic,omitempty"`
	Notes    []string            `json:"notes,omitempty"`
}

// Traffic is the validated history of one traffic phase.
type Traffic struct {
	Linearizability validate.Linearizability `json:"linearizability"`
	Operations      int                      `json:"operations"`
	FailedPuts      int                      `json:"failedPuts"`
	FailedGets      int                      `json:"failedGets"`
	// DefiniteFailures were not applied; IndeterminateFailures may have
	// been. FailuresAfterRetry is what a client retrying definite failures
	// once would have seen fail.
	DefiniteFailures      int `json:"definiteFailures"`
	IndeterminateFailures int `json:"indeterminateFailures"`
	FailuresAfterRetry    int `json:"failuresAfterRetry"`
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
}

// Millis is a duration in milliseconds, with three decimals.
type Millis float64

// Ms converts a duration.
func Ms(d time.Duration) Millis { return Millis(float64(d.Microseconds()) / 1000) }

// Recorder collects measurements while specs run; specs write, the suite
// end reads.
type Recorder struct {
	mu     sync.Mutex
	checks map[string]*Check
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{checks: map[string]*Check{}} }

// Check returns the named check, creating it.
func (r *Recorder) Check(name string) *Check {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.checks[name]
	if !ok {
		c = &Check{Name: name, Timings: map[string]Millis{}, Budgets: map[string]Millis{}, Traffic: map[string]*Traffic{}}
		r.checks[name] = c
	}
	return c
}

// Timing records a measured duration and the budget it is held to (0: none).
func (r *Recorder) Timing(check, name string, d, budget time.Duration) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Timings[name] = Ms(d)
	if budget > 0 {
		c.Budgets[name] = Ms(budget)
	}
}

// Note adds a free-text remark to a check.
func (r *Recorder) Note(check, format string, args ...any) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Notes = append(c.Notes, fmt.Sprintf(format, args...))
}

// Incomplete records that a check could not observe what it judges, and
// why. The spec must end (specs.Incomplete fails it); the runner then
// reports the check as incomplete, not failed. Several calls keep every
// reason.
func (r *Recorder) Incomplete(check, format string, args ...any) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if c.State == Incomplete && c.Incomplete != "" {
		msg = c.Incomplete + "; " + msg
	}
	c.State, c.Incomplete = Incomplete, msg
}

// NotClaimed records that the profile does not claim what a check tests.
// The spec must end with a skip; the runner then reports it as not claimed.
func (r *Recorder) NotClaimed(check, reason string) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	c.State, c.Skipped = NotClaimed, reason
}

// Traffic records a validated history.
func (r *Recorder) Traffic(check, phase string, res validate.Result, historyFile string) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Traffic[phase] = &Traffic{
		Linearizability: res.Linearizability, Operations: res.Stats.Puts + res.Stats.Gets,
		FailedPuts: res.Stats.FailedPuts, FailedGets: res.Stats.FailedGets, LostWrites: len(res.LostWrites),
		DefiniteFailures: res.Stats.DefiniteFailures, IndeterminateFailures: res.Stats.IndeterminateFailures,
		FailuresAfterRetry: res.Stats.FailuresAfterRetry, PrunedPuts: res.Stats.PrunedPuts, UnverifiedKeys: len(res.Unverified),
		LongestWriteGap: Ms(res.Stats.LongestWriteGap), LatencyP50: Ms(res.Stats.LatencyP50), LatencyP99: Ms(res.Stats.LatencyP99),
		Failures: res.Failures, History: historyFile, Visualization: res.Visualization,
	}
}

// Checks returns every check in the given order, then any others by name.
func (r *Recorder) Checks(order []string) []*Check {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Check
	seen := map[string]bool{}
	for _, n := range order {
		if c, ok := r.checks[n]; ok {
			out = append(out, c)
			seen[n] = true
		}
	}
	var rest []string
	for n := range r.checks {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		out = append(out, r.checks[n])
	}
	return out
}

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

// Markdown renders the summary.
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# etcdproof: %s — %s\n\n", rep.Profile, rep.Verdict)
	fmt.Fprintf(&b, "**%s**\n\n", mdText(rep.VerdictLine))
	e := rep.Environment
	fmt.Fprintf(&b, "Kubernetes %s, kind %s, etcd %s, operator %s, suite %s. Run %s, %.0f s.\n\n",
		orDash(e.Kubernetes), orDash(e.Kind), orDash(strings.Join(e.Etcd, " → ")), orDash(e.Operator), orDash(e.Suite), rep.Started.UTC().Format(time.RFC3339), float64(rep.Duration)/1000)
	if u := rep.Operator; u != nil && u.Samples > 0 {
		fmt.Fprintf(&b, "Operator memory: peak RSS %.1f MiB, peak working set %.1f MiB (%d samples).\n\n",
			MiB(u.PeakRSSBytes), MiB(u.PeakWorkingSetBytes), u.Samples)
	}
	b.WriteString("| check | result | time | details |\n|---|---|---|---|\n")
	for _, c := range rep.Checks {
		result := c.State.Label()
		if c.State == Failed || c.State == Incomplete {
			result = "**" + result + "**"
		}
		if c.Required && (c.State == NotClaimed || c.State == NotSelected || c.State == Skipped) {
			// The reason the run cannot pass.
			result = "**" + result + " (required)**"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f s | %s |\n", c.Name, result, float64(c.Duration)/1000, oneLine(c.Reason()))
	}
	for _, c := range rep.Checks {
		if len(c.Timings) == 0 && len(c.Traffic) == 0 && len(c.Notes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", c.Name)
		for _, k := range slices.Sorted(maps.Keys(c.Timings)) {
			budget := ""
			if bgt, ok := c.Budgets[k]; ok {
				budget = fmt.Sprintf(" (budget %.1f s)", float64(bgt)/1000)
			}
			fmt.Fprintf(&b, "- %s: %.2f s%s\n", k, float64(c.Timings[k])/1000, budget)
		}
		for _, k := range slices.Sorted(maps.Keys(c.Traffic)) {
			t := c.Traffic[k]
			fmt.Fprintf(&b, "- traffic during %s: %s, %d ops, failed puts %d, failed gets %d (definite %d, indeterminate %d, %d after one retry), lost writes %d, longest write gap %.2f s, p50 %.1f ms, p99 %.1f ms\n",
				k, t.Linearizability, t.Operations, t.FailedPuts, t.FailedGets, t.DefiniteFailures, t.IndeterminateFailures, t.FailuresAfterRetry,
				t.LostWrites, float64(t.LongestWriteGap)/1000, float64(t.LatencyP50), float64(t.LatencyP99))
			if t.Visualization != "" {
				fmt.Fprintf(&b, "  - visualization: %s\n", t.Visualization)
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// MiB converts bytes to mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdText keeps Markdown from reading emphasis into a line of text.
func mdText(s string) string {
	return strings.NewReplacer("*", "\\*", "_", "\\_", "`", "\\`").Replace(s)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
