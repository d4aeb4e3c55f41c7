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
	// DuringLeaderChange is the number of timeouts a leader change
	// excused, which FailuresAfterRetry leaves out (etcd drops proposals
	// forwarded to a leader that steps down; see excuse).
	DuringLeaderChange int `json:"duringLeaderChange"`
	// LeaderChanges is the number of higher raft terms the history saw.
	LeaderChanges int `json:"leaderChanges"`
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
// What the after-retry policy counts depends on the cluster's election
// timeout: etcd's default is assumed here, Validate uses Options'.
func ComputeStats(h history.History) Stats {
	return computeStats(h, DefaultElectionTimeout)
}

func computeStats(h history.History, electionTimeout time.Duration) Stats {
	var s Stats
	var latencies []time.Duration
	for _, op := range h.Operations {
		if op.Final {
			continue
		}
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
			latencies = append(latencies, time.Duration(op.Return-op.Call))
		}
	}
	judged := judgeAfterRetry(h, electionTimeout)
	s.FailuresAfterRetry, s.DuringLeaderChange, s.LeaderChanges = len(judged.Counted), len(judged.Excused), len(judged.LeaderChanges)
	start, end, writes, ok := trafficTimes(h)
	if !ok {
		return s
	}
	s.Duration = time.Duration(end - start)
	s.LongestWriteGap = longestWriteGap(start, end, writes).Length()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	s.LatencyP50 = Percentile(latencies, 50)
	s.LatencyP99 = Percentile(latencies, 99)
	return s
}

// Span is a stretch of a history, as offsets of its clock.
type Span struct{ From, To time.Duration }

// Length is how long the span lasts.
func (s Span) Length() time.Duration { return s.To - s.From }

// LongestWriteGap is where the history went longest without an
// acknowledged write: Stats.LongestWriteGap is its length.
func LongestWriteGap(h history.History) Span {
	start, end, writes, ok := trafficTimes(h)
	if !ok {
		return Span{}
	}
	return longestWriteGap(start, end, writes)
}

// trafficTimes is when the traffic ran, final reads left out: from the
// first call to the last call or successful return, and when each
// acknowledged put returned. ok is false for a history with no operation.
func trafficTimes(h history.History) (start, end int64, writes []int64, ok bool) {
	start = -1
	for _, op := range h.Operations {
		if op.Final {
			continue
		}
		if start < 0 || op.Call < start {
			start = op.Call
		}
		end = max(end, op.Call)
		if op.Succeeded() {
			end = max(end, op.Return)
			if op.Kind == history.Put {
				writes = append(writes, op.Return)
			}
		}
	}
	return start, end, writes, start >= 0
}

// longestWriteGap is the widest interval between the traffic's start,
// every acknowledged write and its end.
func longestWriteGap(start, end int64, writes []int64) Span {
	points := append(append([]int64{start}, writes...), end)
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	var gap Span
	for i := 1; i < len(points); i++ {
		if d := time.Duration(points[i] - points[i-1]); d > gap.Length() {
			gap = Span{From: time.Duration(points[i-1]), To: time.Duration(points[i])}
		}
	}
	return gap
}

// Percentile is the nearest-rank percentile p of sorted latencies.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
