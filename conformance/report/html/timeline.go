package html

import (
	"cmp"
	"slices"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// Timeline is a traffic phase as the clients lived it, second by second.
// Times are measured from the phase start: the recorder's zero, when the
// traffic process started.
type Timeline struct {
	// Seconds has one entry per second from 0 to the last return.
	Seconds []Second
	// Failures are the failed requests, in the order they returned.
	Failures []Failure
	// LongestWriteGap is where the longest stretch without an
	// acknowledged write lies, measured as validate.ComputeStats measures
	// it, so the shading matches the report's number.
	LongestWriteGap validate.Span
	// End is when the last request returned.
	End time.Duration
	// FinalReads are left out of the timeline: they verify the keys after
	// traffic stopped, they are not traffic.
	FinalReads int
}

// Second is what returned within one second of a phase.
type Second struct {
	Start time.Duration
	// Requests counts every request that returned in it, failed or not.
	Requests int
	Failed   int
	// P50 and P99 are the latencies of its successful requests; Answered
	// is how many there were (none: the percentiles mean nothing).
	Answered int
	P50, P99 time.Duration
}

// Failure is one failed request, placed when the client saw it fail.
type Failure struct {
	At    time.Duration
	Kind  history.Kind
	Key   string
	Class history.ErrorClass
	Error string
	Retry bool
}

// NewTimeline buckets a history by the second in which each request
// returned: that is when a client learned the outcome.
func NewTimeline(h history.History) Timeline {
	var tl Timeline
	var latencies [][]time.Duration
	for _, op := range h.Operations {
		if op.Final {
			tl.FinalReads++
			continue
		}
		at := time.Duration(op.Return)
		i := int(at / time.Second)
		for len(tl.Seconds) <= i {
			tl.Seconds = append(tl.Seconds, Second{Start: time.Duration(len(tl.Seconds)) * time.Second})
			latencies = append(latencies, nil)
		}
		tl.End = max(tl.End, at)
		s := &tl.Seconds[i]
		s.Requests++
		if !op.Succeeded() {
			s.Failed++
			tl.Failures = append(tl.Failures, Failure{At: at, Kind: op.Kind, Key: op.Key, Class: op.Class(), Error: op.Error, Retry: op.Retry})
			continue
		}
		s.Answered++
		latencies[i] = append(latencies[i], time.Duration(op.Return-op.Call))
	}
	for i, l := range latencies {
		slices.Sort(l)
		tl.Seconds[i].P50, tl.Seconds[i].P99 = validate.Percentile(l, 50), validate.Percentile(l, 99)
	}
	slices.SortStableFunc(tl.Failures, func(a, b Failure) int { return cmp.Compare(a.At, b.At) })
	tl.LongestWriteGap = validate.LongestWriteGap(h)
	return tl
}
