// Package validate decides whether a history is acceptable: linearizable
// (porcupine), no acknowledged write lost, every written key read back at
// the end, client-visible errors within what the phase allows, writes
// never stalled longer than a budget, and watch streams that keep etcd's
// promises (see Watches). It also computes the stats the report shows.
package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/model"
)

// Linearizability is porcupine's verdict; Unknown (timeout) is never a pass.
type Linearizability string

const (
	Linearizable    Linearizability = "linearizable"
	NotLinearizable Linearizability = "not-linearizable"
	Undecided       Linearizability = "undecided"
)

// Options are the pass/fail limits.
type Options struct {
	// Timeout bounds the linearizability check.
	Timeout time.Duration
	// MaxWriteGap is the longest allowed time without a successful write;
	// zero disables the check.
	MaxWriteGap time.Duration
	// ClientErrors is what failed requests do to the verdict.
	ClientErrors ClientErrors
	// ElectionTimeout is the cluster's etcd --election-timeout, which
	// bounds when a leader change excuses a timeout (see excusable); zero
	// is etcd's default.
	ElectionTimeout time.Duration
	// MaxLeaderChanges bounds the leader changes the phase may have under
	// NoErrorsAfterRetry: the members the operator restarted, replaced or
	// removed in it (each may be the leader; a correct rolling restart
	// causes at most one change per member, and a change excuses
	// failures). Negative: not judged.
	MaxLeaderChanges int
	// UndrainedStopsAt are the moments (since the history's zero) the
	// phase stopped a member of a release that fails the requests in
	// flight when it stops (etcd 3.4: its gRPC server closes without
	// draining). Each stop may fail the request in flight of each client
	// with the closed connection's error, so a client may have one such
	// failure excused per stop, at that stop, and no other (see
	// excuseUndrained).
	UndrainedStopsAt []time.Duration
	// VisualizationPath, when set, receives porcupine's HTML whenever
	// porcupine decided: always when the history is not linearizable, and
	// when it is, up to maxVisualizedLinearizable operations (undecided
	// leaves nothing to show). About 240 bytes per operation: 0.74 MB for 3000.
	VisualizationPath string
}

// Result is the verdict on one history.
type Result struct {
	Linearizability Linearizability `json:"linearizability"`
	LostWrites      []LostWrite     `json:"lostWrites,omitempty"`
	// Unverified are the keys with an acknowledged write whose final read
	// never succeeded: whether those writes survived is unknown.
	Unverified []string `json:"unverified,omitempty"`
	Errors     []string `json:"errors,omitempty"`
	// Excused are the failures NoErrorsAfterRetry excused, each with its
	// reason: a leader change, or a stopping member that does not drain.
	Excused []string `json:"excused,omitempty"`
	Stats   Stats    `json:"stats"`
	// Failures explains every reason the history fails; empty means pass.
	Failures []string `json:"failures,omitempty"`
	// Incomplete is set when every failure is the suite's own: a history
	// porcupine could not decide in time, keys never read back
	// (Unverified), a visualization that could not be written. The history
	// did not fail any check, but could not be fully checked either; any
	// other failure makes it fail.
	Incomplete bool `json:"incomplete,omitempty"`
	// Visualization is the HTML file written for a decided history.
	Visualization string `json:"visualization,omitempty"`
	// Watch is the verdict on the watchers' streams; nil for a history
	// recorded without watchers.
	Watch *WatchResult `json:"watch,omitempty"`
}

// Passed reports whether the history met every requirement.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// maxVisualizedLinearizable bounds the porcupine pages written for
// linearizable histories: at about 240 bytes an operation, 20000 make 5 MB,
// and a long node-loss phase would add 12 MB to every run's artifacts. A
// history that is not linearizable always gets its page: it is the evidence.
const maxVisualizedLinearizable = 20000

// Validate checks a history against every requirement.
func Validate(h history.History, opts Options) Result {
	electionTimeout := cmp.Or(opts.ElectionTimeout, DefaultElectionTimeout)
	r := Result{Stats: computeStats(h, electionTimeout)}
	suiteMade := 0 // failures that say the suite could not judge
	if len(h.Operations) == 0 {
		r.Failures = append(r.Failures, "the history is empty: no traffic was recorded")
		return r
	}
	ops, left := model.Operations(h)
	r.Stats.PrunedPuts = left.Definite + left.Unobserved
	res, info := porcupine.CheckOperationsVerbose(model.KV, ops, opts.Timeout)
	switch res {
	case porcupine.Ok:
		r.Linearizability = Linearizable
	case porcupine.Illegal:
		r.Linearizability = NotLinearizable
		r.Failures = append(r.Failures, "history is not linearizable")
	default:
		r.Linearizability = Undecided
		r.Failures = append(r.Failures, fmt.Sprintf("linearizability undecided within %s (never a pass)", opts.Timeout))
		suiteMade++
	}
	if opts.VisualizationPath != "" && (r.Linearizability == NotLinearizable ||
		r.Linearizability == Linearizable && len(h.Operations) <= maxVisualizedLinearizable) {
		if err := porcupine.VisualizePath(model.KV, info, opts.VisualizationPath); err != nil {
			r.Failures = append(r.Failures, fmt.Sprintf("writing visualization: %v", err))
			suiteMade++
		} else {
			r.Visualization = opts.VisualizationPath
		}
	}
	r.LostWrites = LostWrites(h)
	for _, lw := range r.LostWrites {
		r.Failures = append(r.Failures, fmt.Sprintf("acknowledged write lost: put(%s, %s) but the final read returned %q", lw.Key, lw.Value, lw.FinalValue))
	}
	if !slices.ContainsFunc(h.Operations, func(op history.Operation) bool { return op.Kind == history.Put && op.Succeeded() }) {
		r.Failures = append(r.Failures, "no write was acknowledged: the history shows nothing about the cluster")
	}
	for _, op := range h.Operations {
		if !op.Succeeded() && !op.Final {
			r.Errors = append(r.Errors, describeError(op))
		}
	}
	switch policy, _ := ParseClientErrors(string(opts.ClientErrors)); policy {
	case NoClientErrors:
		if n := len(r.Errors); n > 0 {
			r.Failures = append(r.Failures, fmt.Sprintf("%d client-visible errors (first: %s)", n, r.Errors[0]))
		}
	case NoErrorsAfterRetry:
		judged := judgeAfterRetry(h, electionTimeout)
		for _, e := range judged.Excused {
			r.Excused = append(r.Excused, e.String())
		}
		var stops []history.Operation
		judged.Counted, stops = excuseUndrained(judged.Counted, opts.UndrainedStopsAt)
		for _, op := range stops {
			r.Excused = append(r.Excused, describeError(op)+", excused as a request in flight on a stopping member that does not drain")
		}
		r.Stats.FailuresAfterRetry = len(judged.Counted)
		if n := len(judged.Counted); n > 0 {
			r.Failures = append(r.Failures, fmt.Sprintf("%d requests failed even after retrying definite failures once (%d client-visible errors in all, %d excused by a leader change; first that counts: %s)",
				n, len(r.Errors), len(judged.Excused), describeError(judged.Counted[0])))
		}
		if n := len(judged.LeaderChanges); opts.MaxLeaderChanges >= 0 && n > opts.MaxLeaderChanges {
			r.Failures = append(r.Failures, fmt.Sprintf("%d leader change(s), more than the %d member(s) the operator restarted, replaced or removed: leader changes the operator caused (%s)",
				n, opts.MaxLeaderChanges, describeChanges(judged.LeaderChanges)))
		}
	}
	if opts.MaxWriteGap > 0 && r.Stats.LongestWriteGap > opts.MaxWriteGap {
		r.Failures = append(r.Failures, fmt.Sprintf("longest write gap %s exceeds the budget %s", r.Stats.LongestWriteGap.Round(time.Millisecond), opts.MaxWriteGap))
	}
	if len(h.Watches) > 0 {
		suiteMade += r.judgeWatches(h)
	}
	if r.Unverified = Unverified(h); len(r.Unverified) > 0 {
		suiteMade++
		r.Failures = append(r.Failures, fmt.Sprintf("could not verify keys %s: each had an acknowledged write but no final read of it succeeded, so a lost write cannot be ruled out", strings.Join(r.Unverified, ", ")))
	}
	r.Incomplete = suiteMade > 0 && len(r.Failures) == suiteMade
	return r
}

// maxWatchFailures bounds the watch violations listed among the failures;
// Result.Watch lists more.
const maxWatchFailures = 10

// judgeWatches adds the watch streams' verdict and returns how many of the
// failures it added are the suite's own: streams that stopped short of the
// last write were not fully checked.
func (r *Result) judgeWatches(h history.History) (suiteMade int) {
	w := Watches(h)
	r.Watch = &w
	for i, v := range w.Violations {
		if i == maxWatchFailures {
			r.Failures = append(r.Failures, fmt.Sprintf("watch: %d more violations (see watch.violations)", w.Stats.Violations-maxWatchFailures))
			break
		}
		r.Failures = append(r.Failures, "watch: "+v.String())
	}
	if len(w.Unchecked) > 0 {
		r.Failures = append(r.Failures, "could not check watch streams to the end of the writes: "+strings.Join(w.Unchecked, "; "))
		suiteMade++
	}
	return suiteMade
}

// describeChanges names the first few leader changes.
func describeChanges(changes []LeaderChange) string {
	const most = 5
	var names []string
	for i, c := range changes {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(changes)-most))
			break
		}
		names = append(names, c.String())
	}
	return strings.Join(names, "; ")
}
