// Package validate decides whether a history is acceptable: linearizable
// (porcupine), no acknowledged write lost, every written key read back at
// the end, client-visible errors within what the phase allows, and writes
// never stalled longer than a budget. It also computes the stats the
// report shows.
package validate

import (
	"fmt"
	"slices"
	"sort"
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

// ClientErrors is how a phase judges failed requests (final reads aside).
// Every failure is listed in Result.Errors and counted in Stats whatever
// the policy.
type ClientErrors string

const (
	// NoClientErrors fails the history on any failed request. It is the
	// zero value's meaning.
	NoClientErrors ClientErrors = "none"
	// NoErrorsAfterRetry fails the history on any failure an application
	// that retries a definite failure once would have seen: the traffic
	// client does exactly that, so a definite failure followed by a
	// successful retry is forgiven, and every other failure (an
	// indeterminate one, a failed retry) counts.
	NoErrorsAfterRetry ClientErrors = "after-retry"
	// AllowClientErrors keeps failed requests out of the verdict. For
	// phases where the suite itself kills a member: requests in flight on
	// it fail whatever the operator does, so only linearizability, lost
	// writes and the write gap judge the operator there.
	AllowClientErrors ClientErrors = "allowed"
)

// ParseClientErrors reads a policy name; "" is NoClientErrors.
func ParseClientErrors(s string) (ClientErrors, error) {
	switch p := ClientErrors(s); p {
	case "":
		return NoClientErrors, nil
	case NoClientErrors, NoErrorsAfterRetry, AllowClientErrors:
		return p, nil
	}
	return "", fmt.Errorf("%q is not one of %s, %s, %s", s, NoClientErrors, NoErrorsAfterRetry, AllowClientErrors)
}

// Options are the pass/fail limits.
type Options struct {
	// Timeout bounds the linearizability check.
	Timeout time.Duration
	// MaxWriteGap is the longest allowed time without a successful write;
	// zero disables the check.
	MaxWriteGap time.Duration
	// ClientErrors is what failed requests do to the verdict.
	ClientErrors ClientErrors
	// VisualizationPath, when set, receives porcupine's HTML whenever the
	// history is not linearizable.
	VisualizationPath string
}

// LostWrite is an acknowledged put whose value the final read cannot
// explain.
type LostWrite struct {
	Key        string `json:"key"`
	Value      string `json:"value"`
	FinalValue string `json:"finalValue"`
}

// Stats summarise a history for the report. Counts leave out the final
// reads.
type Stats struct {
	Puts       int `json:"puts"`
	Gets       int `json:"gets"`
	FailedPuts int `json:"failedPuts"`
	FailedGets int `json:"failedGets"`
	// DefiniteFailures and IndeterminateFailures split the failed
	// requests by history.ErrorClass.
	DefiniteFailures      int `json:"definiteFailures"`
	IndeterminateFailures int `json:"indeterminateFailures"`
	// Retries is the number of retries of definite failures.
	Retries int `json:"retries"`
	// FailuresAfterRetry is what an application that retries a definite
	// failure once would have seen fail (see NoErrorsAfterRetry).
	FailuresAfterRetry int `json:"failuresAfterRetry"`
	// PrunedPuts is the number of failed puts left out of the
	// linearizability check: the definite ones and the indeterminate ones
	// whose value no read observed (see model.Operations).
	PrunedPuts      int           `json:"prunedPuts"`
	LongestWriteGap time.Duration `json:"longestWriteGapNs"`
	LatencyP50      time.Duration `json:"latencyP50Ns"`
	LatencyP99      time.Duration `json:"latencyP99Ns"`
	Duration        time.Duration `json:"durationNs"`
}

// Result is the verdict on one history.
type Result struct {
	Linearizability Linearizability `json:"linearizability"`
	LostWrites      []LostWrite     `json:"lostWrites,omitempty"`
	// Unverified are the keys with an acknowledged write whose final read
	// never succeeded: whether those writes survived is unknown.
	Unverified []string `json:"unverified,omitempty"`
	Errors     []string `json:"errors,omitempty"`
	Stats      Stats    `json:"stats"`
	// Failures explains every reason the history fails; empty means pass.
	Failures []string `json:"failures,omitempty"`
	// Incomplete is set when the only failure is Unverified: the history
	// did not fail any check, but could not be fully checked either.
	Incomplete bool `json:"incomplete,omitempty"`
	// Visualization is the HTML file written for a non-linearizable history.
	Visualization string `json:"visualization,omitempty"`
}

// Passed reports whether the history met every requirement.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// Validate checks a history against every requirement.
func Validate(h history.History, opts Options) Result {
	r := Result{Stats: ComputeStats(h)}
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
		if opts.VisualizationPath != "" {
			if err := porcupine.VisualizePath(model.KV, info, opts.VisualizationPath); err != nil {
				r.Failures = append(r.Failures, fmt.Sprintf("writing visualization: %v", err))
			} else {
				r.Visualization = opts.VisualizationPath
			}
		}
	default:
		r.Linearizability = Undecided
		r.Failures = append(r.Failures, fmt.Sprintf("linearizability undecided within %s (never a pass)", opts.Timeout))
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
		if n, first := failuresAfterRetry(h); n > 0 {
			r.Failures = append(r.Failures, fmt.Sprintf("%d requests failed even after retrying definite failures once (%d client-visible errors in all; first that counts: %s)", n, len(r.Errors), describeError(first)))
		}
	}
	if opts.MaxWriteGap > 0 && r.Stats.LongestWriteGap > opts.MaxWriteGap {
		r.Failures = append(r.Failures, fmt.Sprintf("longest write gap %s exceeds the budget %s", r.Stats.LongestWriteGap.Round(time.Millisecond), opts.MaxWriteGap))
	}
	// Last, so Incomplete can tell whether anything else failed.
	if r.Unverified = Unverified(h); len(r.Unverified) > 0 {
		r.Incomplete = len(r.Failures) == 0
		r.Failures = append(r.Failures, fmt.Sprintf("could not verify keys %s: each had an acknowledged write but no final read of it succeeded, so a lost write cannot be ruled out", strings.Join(r.Unverified, ", ")))
	}
	return r
}

func describeError(op history.Operation) string {
	retry := ""
	if op.Retry {
		retry = " (retry)"
	}
	return fmt.Sprintf("client %d %s(%s)%s: %s [%s]", op.Client, op.Kind, op.Key, retry, op.Error, op.Class())
}

// failuresAfterRetry counts the failed requests (final reads aside) that an
// application retrying a definite failure once would have seen: all of
// them except a definite failure the client retried, whose retry is
// counted instead. The traffic client retries right away, so the retry is
// the same client's next operation.
func failuresAfterRetry(h history.History) (int, history.Operation) {
	retried := map[int]bool{} // index of a definite failure that was retried
	prev := map[int]int{}     // client -> index of its previous operation
	for i, op := range h.Operations {
		if op.Final {
			continue
		}
		if j, ok := prev[op.Client]; ok && op.Retry {
			if p := h.Operations[j]; p.Class() == history.Definite && !p.Retry {
				retried[j] = true
			}
		}
		prev[op.Client] = i
	}
	n, first := 0, history.Operation{}
	for i, op := range h.Operations {
		if op.Final || op.Succeeded() || retried[i] {
			continue
		}
		if n == 0 {
			first = op
		}
		n++
	}
	return n, first
}

// Unverified returns, sorted, the keys with an acknowledged put but no
// successful final read. Lost writes are looked for in the final reads, so
// on these keys they cannot be ruled out.
func Unverified(h history.History) []string {
	written, read := map[string]bool{}, map[string]bool{}
	for _, op := range h.Operations {
		switch {
		case op.Kind == history.Put && op.Succeeded():
			written[op.Key] = true
		case op.Kind == history.Get && op.Final && op.Succeeded():
			read[op.Key] = true
		}
	}
	var keys []string
	for k := range written {
		if !read[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// LostWrites compares each key's final read with the acknowledged puts.
// A put W is lost when the final value was written by a put P that ended
// (or, if it failed, could have ended) before W began: P must precede W, so
// W's value or a later one should be visible.
func LostWrites(h history.History) []LostWrite {
	puts := map[string]history.Operation{} // by value; values are unique
	acked := map[string][]history.Operation{}
	for _, op := range h.Operations {
		if op.Kind != history.Put {
			continue
		}
		puts[op.Value] = op
		if op.Succeeded() {
			acked[op.Key] = append(acked[op.Key], op)
		}
	}
	var lost []LostWrite
	for _, final := range h.Operations {
		if !final.Final || !final.Succeeded() || final.Kind != history.Get {
			continue
		}
		writer, known := puts[final.Value]
		writerEnd := writer.Return
		if known && !writer.Succeeded() {
			writerEnd = model.Infinity
		}
		for _, w := range acked[final.Key] {
			switch {
			case !final.Found, !known:
				lost = append(lost, LostWrite{Key: w.Key, Value: w.Value, FinalValue: final.Value})
			case w.Value != writer.Value && writerEnd < w.Call:
				lost = append(lost, LostWrite{Key: w.Key, Value: w.Value, FinalValue: final.Value})
			}
		}
	}
	return lost
}

// ComputeStats counts operations, finds the longest stretch without a
// successful write and the latency percentiles of successful requests.
func ComputeStats(h history.History) Stats {
	var s Stats
	var latencies []time.Duration
	var start, end int64 = -1, 0
	var writeTimes []int64
	for _, op := range h.Operations {
		if op.Final {
			continue
		}
		if start < 0 || op.Call < start {
			start = op.Call
		}
		end = max(end, op.Call)
		switch op.Class() {
		case history.Definite:
			s.DefiniteFailures++
		case history.Indeterminate:
			s.IndeterminateFailures++
		}
		if op.Retry {
			s.Retries++
		}
		switch op.Kind {
		case history.Put:
			s.Puts++
			if !op.Succeeded() {
				s.FailedPuts++
			}
		case history.Get:
			s.Gets++
			if !op.Succeeded() {
				s.FailedGets++
			}
		}
		if op.Succeeded() {
			end = max(end, op.Return)
			latencies = append(latencies, time.Duration(op.Return-op.Call))
			if op.Kind == history.Put {
				writeTimes = append(writeTimes, op.Return)
			}
		}
	}
	s.FailuresAfterRetry, _ = failuresAfterRetry(h)
	if start < 0 {
		return s
	}
	s.Duration = time.Duration(end - start)
	points := append([]int64{start}, writeTimes...)
	points = append(points, end)
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	for i := 1; i < len(points); i++ {
		s.LongestWriteGap = max(s.LongestWriteGap, time.Duration(points[i]-points[i-1]))
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	s.LatencyP50 = percentile(latencies, 50)
	s.LatencyP99 = percentile(latencies, 99)
	return s
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
