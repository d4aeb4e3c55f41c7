package report

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

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

// Traffic records a validated history whose zero is started.
func (r *Recorder) Traffic(check, phase string, started time.Time, res validate.Result, historyFile string) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Traffic[phase] = &Traffic{Started: started,
		Linearizability: res.Linearizability, Operations: res.Stats.Puts + res.Stats.Gets,
		FailedPuts: res.Stats.FailedPuts, FailedGets: res.Stats.FailedGets, LostWrites: len(res.LostWrites),
		DefiniteFailures: res.Stats.DefiniteFailures, IndeterminateFailures: res.Stats.IndeterminateFailures,
		FailuresAfterRetry: res.Stats.FailuresAfterRetry, DuringLeaderChange: res.Stats.DuringLeaderChange,
		LeaderChanges: res.Stats.LeaderChanges, Excused: res.Excused, PrunedPuts: res.Stats.PrunedPuts, UnverifiedKeys: len(res.Unverified),
		LongestWriteGap: Ms(res.Stats.LongestWriteGap), LatencyP50: Ms(res.Stats.LatencyP50), LatencyP99: Ms(res.Stats.LatencyP99),
		Failures: res.Failures, History: historyFile, Visualization: res.Visualization,
	}
	if res.Watch != nil {
		c.Traffic[phase].Watch = &res.Watch.Stats
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
