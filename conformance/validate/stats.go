package validate

import (
	"sort"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

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
	// DuringLeaderChange is the number of indeterminate failures during a
	// leader change, which FailuresAfterRetry leaves out (etcd drops
	// proposals forwarded to a leader that steps down; see
	// duringLeaderChange).
	DuringLeaderChange int `json:"duringLeaderChange"`
	// PrunedPuts is the number of failed puts left out of the
	// linearizability check: the definite ones and the indeterminate ones
	// whose value no read observed (see model.Operations).
	PrunedPuts      int           `json:"prunedPuts"`
	LongestWriteGap time.Duration `json:"longestWriteGapNs"`
	LatencyP50      time.Duration `json:"latencyP50Ns"`
	LatencyP99      time.Duration `json:"latencyP99Ns"`
	Duration        time.Duration `json:"durationNs"`
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
	s.FailuresAfterRetry, _, s.DuringLeaderChange = failuresAfterRetry(h)
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
