// Package validate decides whether a history is acceptable: linearizable
// (porcupine), no acknowledged write lost, no client-visible error (unless
// the phase injects a fault), and
// writes never stalled longer than a budget. It also computes the stats the
// report shows.
package validate

import (
	"fmt"
	"sort"
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
	// AllowClientErrors keeps failed requests out of the verdict (they are
	// still listed in Errors and counted in Stats). For phases where the suite
	// itself kills a member: requests in flight on it fail whatever the
	// operator does, so only linearizability, lost writes and the write gap
	// judge the operator there.
	AllowClientErrors bool
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

// Stats summarise a history for the report.
type Stats struct {
	Puts            int           `json:"puts"`
	Gets            int           `json:"gets"`
	FailedPuts      int           `json:"failedPuts"`
	FailedGets      int           `json:"failedGets"`
	LongestWriteGap time.Duration `json:"longestWriteGapNs"`
	LatencyP50      time.Duration `json:"latencyP50Ns"`
	LatencyP99      time.Duration `json:"latencyP99Ns"`
	Duration        time.Duration `json:"durationNs"`
}

// Result is the verdict on one history.
type Result struct {
	Linearizability Linearizability `json:"linearizability"`
	LostWrites      []LostWrite     `json:"lostWrites,omitempty"`
	Errors          []string        `json:"errors,omitempty"`
	Stats           Stats           `json:"stats"`
	// Failures explains every reason the history fails; empty means pass.
	Failures []string `json:"failures,omitempty"`
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
	var info porcupine.LinearizationInfo
	r.Linearizability, info = CheckLinearizable(h, opts.Timeout)
	switch r.Linearizability {
	case NotLinearizable:
		r.Failures = append(r.Failures, "history is not linearizable")
		if opts.VisualizationPath != "" {
			if err := porcupine.VisualizePath(model.KV, info, opts.VisualizationPath); err != nil {
				r.Failures = append(r.Failures, fmt.Sprintf("writing visualization: %v", err))
			} else {
				r.Visualization = opts.VisualizationPath
			}
		}
	case Undecided:
		r.Failures = append(r.Failures, fmt.Sprintf("linearizability undecided within %s (never a pass)", opts.Timeout))
	}
	r.LostWrites = LostWrites(h)
	for _, lw := range r.LostWrites {
		r.Failures = append(r.Failures, fmt.Sprintf("acknowledged write lost: put(%s, %s) but the final read returned %q", lw.Key, lw.Value, lw.FinalValue))
	}
	if !hasFinalReads(h) {
		r.Failures = append(r.Failures, "no final reads: lost writes cannot be ruled out")
	}
	for _, op := range h.Operations {
		if !op.Succeeded() && !op.Final {
			r.Errors = append(r.Errors, fmt.Sprintf("client %d %s(%s): %s", op.Client, op.Kind, op.Key, op.Error))
		}
	}
	if n := len(r.Errors); n > 0 && !opts.AllowClientErrors {
		r.Failures = append(r.Failures, fmt.Sprintf("%d client-visible errors (first: %s)", n, r.Errors[0]))
	}
	if opts.MaxWriteGap > 0 && r.Stats.LongestWriteGap > opts.MaxWriteGap {
		r.Failures = append(r.Failures, fmt.Sprintf("longest write gap %s exceeds the budget %s", r.Stats.LongestWriteGap.Round(time.Millisecond), opts.MaxWriteGap))
	}
	return r
}

// CheckLinearizable runs porcupine with the KV model.
func CheckLinearizable(h history.History, timeout time.Duration) (Linearizability, porcupine.LinearizationInfo) {
	res, info := porcupine.CheckOperationsVerbose(model.KV, model.Operations(h), timeout)
	switch res {
	case porcupine.Ok:
		return Linearizable, info
	case porcupine.Illegal:
		return NotLinearizable, info
	default:
		return Undecided, info
	}
}

func hasFinalReads(h history.History) bool {
	for _, op := range h.Operations {
		if op.Final && op.Succeeded() {
			return true
		}
	}
	return false
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
