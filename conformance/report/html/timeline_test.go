package html

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/history/historytest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// at is a time of the hand-written history, in seconds from the phase start.
func at(seconds float64) int64 { return int64(seconds * float64(time.Second)) }

// smallHistory: three clients; a definite failure retried; an
// indeterminate put that hangs for 2.2 s; nothing written from 1.2 s to
// 3.7 s; second 2 sees no request return; one final read.
// writeSmallHistory writes smallHistory to rel under dir, folders and all.
func writeSmallHistory(t *testing.T, dir, rel string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := history.WriteFile(path, smallHistory()); err != nil {
		t.Fatal(err)
	}
}

func smallHistory() history.History {
	op := func(client int, kind history.Kind, key string, call, ret float64) history.Operation {
		return history.Operation{Client: client, Kind: kind, Key: key, Call: at(call), Return: at(ret)}
	}
	failed := func(o history.Operation, class history.ErrorClass, err string) history.Operation {
		o.ErrorClass, o.Error = class, err
		return o
	}
	retry := op(2, history.Get, "k1", 1.7, 1.8)
	retry.Retry = true
	final := op(3, history.Get, "k1", 4.0, 4.1)
	final.Final = true
	return history.History{Operations: []history.Operation{
		op(0, history.Put, "k1", 0.1, 0.2),
		op(0, history.Get, "k1", 0.25, 0.3),
		op(0, history.Put, "k1", 0.4, 0.9),
		op(1, history.Put, "k2", 1.1, 1.2),
		failed(op(2, history.Get, "k1", 1.5, 1.6), history.Definite, "etcdserver: no leader"),
		retry,
		failed(op(1, history.Put, "k2", 1.3, 3.5), history.Indeterminate, "context deadline exceeded"),
		op(0, history.Put, "k1", 3.6, 3.7),
		final,
	}}
}

func TestTimelineBucketsRequestsByTheSecondTheyReturned(t *testing.T) {
	tl := NewTimeline(smallHistory())
	ms := time.Millisecond
	want := []Second{
		{Start: 0, Requests: 3, Answered: 3, P50: 100 * ms, P99: 500 * ms},
		{Start: time.Second, Requests: 3, Failed: 1, Answered: 2, P50: 100 * ms, P99: 100 * ms},
		{Start: 2 * time.Second},
		{Start: 3 * time.Second, Requests: 2, Failed: 1, Answered: 1, P50: 100 * ms, P99: 100 * ms},
	}
	if len(tl.Seconds) != len(want) {
		t.Fatalf("%d seconds, want %d: %+v", len(tl.Seconds), len(want), tl.Seconds)
	}
	for i, w := range want {
		got := tl.Seconds[i]
		// Float seconds make latencies a nanosecond off; round them.
		got.P50, got.P99 = got.P50.Round(ms), got.P99.Round(ms)
		if got != w {
			t.Errorf("second %d = %+v, want %+v", i, got, w)
		}
	}
	if tl.FinalReads != 1 || tl.End != time.Duration(at(3.7)) {
		t.Errorf("final reads %d, end %s; want 1, 3.7s", tl.FinalReads, tl.End)
	}
	if len(tl.Failures) != 2 || tl.Failures[0].Class != history.Definite || tl.Failures[0].At != time.Duration(at(1.6)) ||
		tl.Failures[1].Class != history.Indeterminate || tl.Failures[1].At != time.Duration(at(3.5)) || tl.Failures[1].Kind != history.Put {
		t.Errorf("failures = %+v", tl.Failures)
	}
}

func TestLongestWriteGapIsWhereValidateMeasuresIt(t *testing.T) {
	h := smallHistory()
	gap := NewTimeline(h).LongestWriteGap
	if gap.From != time.Duration(at(1.2)) || gap.To != time.Duration(at(3.7)) {
		t.Errorf("gap = %v..%v, want 1.2s..3.7s", gap.From, gap.To)
	}
	// The shading must be the report's number, on any history.
	histories := []history.History{h, {}}
	for seed := range uint64(20) {
		r := historytest.Register("k", 3, 30, seed)
		r.Operations = append(r.Operations, historytest.FailedPuts("k", 5, int64(seed*7), history.Indeterminate)...)
		histories = append(histories, r)
	}
	for i, h := range histories {
		if got, want := NewTimeline(h).LongestWriteGap.Length(), validate.ComputeStats(h).LongestWriteGap; got != want {
			t.Errorf("history %d: gap %s, validate says %s", i, got, want)
		}
	}
}

func TestChartShadesTheGapAndBreaksLatencyWhereNothingSucceeded(t *testing.T) {
	c := newChart(NewTimeline(smallHistory()))
	if c == nil {
		t.Fatal("no chart")
	}
	// Four seconds over 880 units: 220 a second.
	if got := len(strings.Fields(c.Throughput)); got != 4 {
		t.Errorf("throughput has %d points, want 4: %s", got, c.Throughput)
	}
	if len(c.P50) != 2 || len(c.P99) != 2 {
		t.Errorf("latency segments p50 %q p99 %q, want 2 each (second 2 has no answer)", c.P50, c.P99)
	}
	if len(c.Definite) != 1 || len(c.Indeterminate) != 1 || c.HiddenMarks != 0 {
		t.Errorf("marks: definite %v, indeterminate %v, hidden %d", c.Definite, c.Indeterminate, c.HiddenMarks)
	}
	if g := c.Gap; g == nil || !near(g.X, plotLeft+1.2*220) || !near(g.W, 2.5*220) || !strings.Contains(g.Label, "2.50 s") {
		t.Errorf("gap band = %+v, want x %v width %v", g, plotLeft+1.2*220, 2.5*220)
	}
	var labels []string
	for _, tk := range c.LatencyTicks {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, ",") != "100 ms,1 s" {
		t.Errorf("latency ticks %v, want decades around 100 ms..500 ms", labels)
	}
	if newChart(Timeline{}) != nil {
		t.Error("a chart for an empty timeline")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestFailureMarksAreCappedPerClass(t *testing.T) {
	h := history.History{Operations: historytest.FailedPuts("k", maxMarksDrawn+10, 0, history.Definite)}
	c := newChart(NewTimeline(h))
	if len(c.Definite) != maxMarksDrawn || c.HiddenMarks != 10 {
		t.Errorf("drew %d definite marks, hid %d; want %d and 10", len(c.Definite), c.HiddenMarks, maxMarksDrawn)
	}
}
