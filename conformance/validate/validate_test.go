package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/history/historytest"
)

func load(t *testing.T, name string) history.History {
	t.Helper()
	h, err := history.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestValidateRecordedHistories(t *testing.T) {
	cases := []struct {
		file         string
		policy       ClientErrors
		want         Linearizability
		lost         int
		incomplete   bool
		failsMention []string
	}{
		{file: "linearizable.jsonl", want: Linearizable},
		// The put timed out but took effect: uncertain, so still linearizable,
		// yet the client saw an error, which the suite does not accept.
		{file: "failed-put-took-effect.jsonl", want: Linearizable, failsMention: []string{"1 client-visible errors"}},
		// An indeterminate failure is not forgiven by the retry policy.
		{file: "failed-put-took-effect.jsonl", policy: NoErrorsAfterRetry, want: Linearizable, failsMention: []string{"1 requests failed even after retrying"}},
		{file: "stale-read.jsonl", want: NotLinearizable, failsMention: []string{"not linearizable"}},
		{file: "lost-write.jsonl", want: NotLinearizable, lost: 2, failsMention: []string{"acknowledged write lost: put(k0, c1-1)", "acknowledged write lost: put(k1, c1-2)"}},
		// k1 was written but its final read failed: a lost write there can
		// be neither found nor ruled out.
		{file: "final-read-failed.jsonl", want: Linearizable, incomplete: true, failsMention: []string{"could not verify keys k1"}},
		// Raw errors count under "none"; under "after-retry" the definite
		// failure whose retry succeeded is forgiven.
		{file: "definite-failure-retried.jsonl", want: Linearizable, failsMention: []string{"1 client-visible errors"}},
		{file: "definite-failure-retried.jsonl", policy: NoErrorsAfterRetry, want: Linearizable},
		// A put the client was told was not applied was read: dropping
		// definite failures makes that a violation.
		{file: "definite-failure-applied.jsonl", policy: AllowClientErrors, want: NotLinearizable, failsMention: []string{"not linearizable"}},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+string(tc.policy), func(t *testing.T) {
			vis := filepath.Join(t.TempDir(), "vis.html")
			r := Validate(load(t, tc.file), Options{Timeout: 10 * time.Second, ClientErrors: tc.policy, VisualizationPath: vis})
			if r.Linearizability != tc.want {
				t.Errorf("linearizability = %s, want %s", r.Linearizability, tc.want)
			}
			if len(r.LostWrites) != tc.lost {
				t.Errorf("lost writes = %v, want %d", r.LostWrites, tc.lost)
			}
			if r.Incomplete != tc.incomplete {
				t.Errorf("incomplete = %v, want %v (failures %q)", r.Incomplete, tc.incomplete, r.Failures)
			}
			if r.Passed() != (len(tc.failsMention) == 0) {
				t.Errorf("passed = %v, failures %q", r.Passed(), r.Failures)
			}
			all := strings.Join(r.Failures, "\n")
			for _, m := range tc.failsMention {
				if !strings.Contains(all, m) {
					t.Errorf("failures %q do not mention %q", r.Failures, m)
				}
			}
			// Porcupine's page, linearizable or not.
			if _, err := os.Stat(vis); err != nil || r.Visualization != vis {
				t.Errorf("visualization %q (%v), want %s written", r.Visualization, err, vis)
			}
		})
	}
}

func TestUndecidedIsNeverAPass(t *testing.T) {
	// A timeout this short cannot finish on many concurrent operations.
	var h history.History
	for c := 0; c < 12; c++ {
		for i := 0; i < 60; i++ {
			h.Operations = append(h.Operations,
				history.Operation{Client: c, Kind: history.Put, Key: "k", Value: string(rune('a'+c)) + strings.Repeat("x", i), Call: 0, Return: 1_000_000})
		}
	}
	h.Operations = append(h.Operations, history.Operation{Kind: history.Get, Key: "k", Value: "a", Found: true, Call: 2_000_000, Return: 2_000_001, Final: true})
	vis := filepath.Join(t.TempDir(), "vis.html")
	r := Validate(h, Options{Timeout: time.Nanosecond, VisualizationPath: vis})
	if r.Linearizability != Undecided {
		t.Fatalf("linearizability = %s, want undecided with a 1ns limit", r.Linearizability)
	}
	if r.Passed() {
		t.Fatalf("a history porcupine could not decide passed: %+v", r.Failures)
	}
	// The suite ran out of time, the operator did nothing wrong: INCOMPLETE.
	if !r.Incomplete {
		t.Errorf("an undecided history with nothing else wrong is not incomplete: %q", r.Failures)
	}
	// Undecided leaves porcupine nothing to show.
	if _, err := os.Stat(vis); err == nil || r.Visualization != "" {
		t.Errorf("visualization %q written for an undecided history", r.Visualization)
	}
}

// A linearizable history gets porcupine's page too, so every phase of a
// report links one; it is the page porcupine writes, holding the history's
// operations.
func TestLinearizableHistoryGetsItsVisualization(t *testing.T) {
	vis := filepath.Join(t.TempDir(), "linearizability-replace.html")
	r := Validate(load(t, "linearizable.jsonl"), Options{Timeout: 10 * time.Second, VisualizationPath: vis})
	if r.Linearizability != Linearizable || !r.Passed() {
		t.Fatalf("linearizability = %s, failures %q; want a linearizable pass", r.Linearizability, r.Failures)
	}
	if r.Visualization != vis {
		t.Errorf("visualization = %q, want %s", r.Visualization, vis)
	}
	b, err := os.ReadFile(vis)
	if err != nil {
		t.Fatal(err)
	}
	if page := string(b); !strings.Contains(page, "<html") || !strings.Contains(page, "put(k0, ") {
		t.Errorf("%s is not porcupine's page of the history (%d bytes)", vis, len(b))
	}
}

func TestEmptyHistoryFails(t *testing.T) {
	if r := Validate(history.History{}, Options{Timeout: time.Second}); r.Passed() {
		t.Fatal("an empty history passed")
	}
}

func TestStatsWriteGapAndLatency(t *testing.T) {
	ms := int64(time.Millisecond)
	h := history.History{Operations: []history.Operation{
		{Kind: history.Put, Key: "a", Value: "1", Call: 0, Return: 10 * ms},
		{Kind: history.Put, Key: "a", Value: "2", Call: 20 * ms, Return: 3020 * ms, Error: "unavailable"},
		{Kind: history.Put, Key: "a", Value: "3", Call: 3100 * ms, Return: 3110 * ms},
		{Kind: history.Get, Key: "a", Value: "3", Found: true, Call: 3200 * ms, Return: 3220 * ms},
	}}
	s := ComputeStats(h)
	if s.LongestWriteGap != 3100*time.Millisecond {
		t.Errorf("longest write gap = %s, want 3.1s", s.LongestWriteGap)
	}
	if s.Puts != 3 || s.FailedPuts != 1 || s.Gets != 1 {
		t.Errorf("counts = %+v", s)
	}
	if s.LatencyP99 != 20*time.Millisecond {
		t.Errorf("p99 = %s, want 20ms", s.LatencyP99)
	}
	r := Validate(h, Options{Timeout: time.Second, MaxWriteGap: time.Second})
	if !strings.Contains(strings.Join(r.Failures, "\n"), "longest write gap 3.1s exceeds the budget 1s") {
		t.Errorf("failures = %q", r.Failures)
	}
}

// Where the suite kills a member, a request in flight on it may fail; that
// is listed but only linearizability and lost writes judge the history.
func TestAllowClientErrorsStillCatchesLostWrites(t *testing.T) {
	opts := Options{Timeout: 10 * time.Second, ClientErrors: AllowClientErrors}
	r := Validate(load(t, "failed-put-took-effect.jsonl"), opts)
	if !r.Passed() || len(r.Errors) != 1 {
		t.Errorf("failed put with errors allowed: passed = %v, errors = %v, failures = %v", r.Passed(), r.Errors, r.Failures)
	}
	if r := Validate(load(t, "lost-write.jsonl"), opts); r.Passed() {
		t.Error("a history that lost acknowledged writes passed with client errors allowed")
	}
}

// A burst of failed puts nobody read (puts failing fast during an
// election) used to leave porcupine undecided, a false failure.
func TestUnobservedFailedPutsAreDecided(t *testing.T) {
	h := historytest.Register("k", 4, 200, 7)
	h.Operations = append(h.Operations, historytest.FailedPuts("k", 200, 100, history.Indeterminate)...)
	r := Validate(h, Options{Timeout: 5 * time.Second, ClientErrors: AllowClientErrors})
	if r.Linearizability != Linearizable || !r.Passed() {
		t.Fatalf("linearizability = %s, failures %q; want a linearizable pass", r.Linearizability, r.Failures)
	}
	if r.Stats.PrunedPuts != 200 || r.Stats.IndeterminateFailures != 200 {
		t.Errorf("stats = %+v, want 200 indeterminate failures, all pruned", r.Stats)
	}
}

func TestClientErrorPolicies(t *testing.T) {
	ms := int64(time.Millisecond)
	ok := func(c int, v string, at int64) history.Operation {
		return history.Operation{Client: c, Kind: history.Put, Key: "k", Value: v, Call: at * ms, Return: at*ms + 1}
	}
	failed := func(c int, v string, at int64, class history.ErrorClass) history.Operation {
		op := ok(c, v, at)
		op.Error, op.ErrorClass = "failed", class
		return op
	}
	retry := func(op history.Operation) history.Operation { op.Retry = true; return op }
	final := history.Operation{Client: 9, Kind: history.Get, Key: "k", Value: "last", Found: true, Call: 100 * ms, Return: 101 * ms, Final: true}
	cases := []struct {
		name                string
		ops                 []history.Operation
		definite, indet     int
		afterRetry          int
		failsNone, failsRet bool
	}{
		{name: "no failure", ops: []history.Operation{ok(0, "last", 1)}},
		{name: "definite, retry succeeded", ops: []history.Operation{failed(0, "a", 1, history.Definite), retry(ok(0, "last", 2))},
			definite: 1, failsNone: true},
		{name: "definite, retry failed", ops: []history.Operation{ok(1, "last", 1), failed(0, "a", 1, history.Definite), retry(failed(0, "b", 2, history.Definite))},
			definite: 2, afterRetry: 1, failsNone: true, failsRet: true},
		{name: "indeterminate is never retried", ops: []history.Operation{ok(1, "last", 1), failed(0, "a", 1, history.Indeterminate)},
			indet: 1, afterRetry: 1, failsNone: true, failsRet: true},
		{name: "unclassified counts as indeterminate", ops: []history.Operation{ok(1, "last", 1), failed(0, "a", 1, "")},
			indet: 1, afterRetry: 1, failsNone: true, failsRet: true},
		{name: "definite, not retried", ops: []history.Operation{ok(1, "last", 1), failed(0, "a", 1, history.Definite), ok(0, "b", 0)},
			definite: 1, afterRetry: 1, failsNone: true, failsRet: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := history.History{Operations: append(tc.ops, final)}
			s := ComputeStats(h)
			if s.DefiniteFailures != tc.definite || s.IndeterminateFailures != tc.indet || s.FailuresAfterRetry != tc.afterRetry {
				t.Errorf("stats = %+v", s)
			}
			for policy, fails := range map[ClientErrors]bool{NoClientErrors: tc.failsNone, NoErrorsAfterRetry: tc.failsRet, AllowClientErrors: false} {
				r := Validate(h, Options{Timeout: 5 * time.Second, ClientErrors: policy})
				if r.Passed() == fails {
					t.Errorf("%s: passed = %v, failures %q", policy, r.Passed(), r.Failures)
				}
			}
		})
	}
}

func TestParseClientErrors(t *testing.T) {
	for in, want := range map[string]ClientErrors{"": NoClientErrors, "none": NoClientErrors, "after-retry": NoErrorsAfterRetry, "allowed": AllowClientErrors} {
		if got, err := ParseClientErrors(in); err != nil || got != want {
			t.Errorf("ParseClientErrors(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseClientErrors("sometimes"); err == nil {
		t.Error("an unknown policy parsed")
	}
}

// A history where no write succeeded shows nothing; it must not pass even
// where client errors are allowed.
func TestNoAcknowledgedWriteFails(t *testing.T) {
	h := history.History{Operations: []history.Operation{
		{Kind: history.Put, Key: "k", Value: "a", Call: 0, Return: 10, Error: "etcdserver: no leader", ErrorClass: history.Definite},
		{Kind: history.Get, Key: "k", Call: 20, Return: 30, Final: true},
	}}
	r := Validate(h, Options{Timeout: time.Second, ClientErrors: AllowClientErrors})
	if r.Passed() || r.Incomplete {
		t.Fatalf("passed = %v, incomplete = %v, failures %q", r.Passed(), r.Incomplete, r.Failures)
	}
}

// Not being able to verify a key and failing another check is a failure,
// not an incomplete result.
func TestUnverifiedWithAnotherFailureIsNotIncomplete(t *testing.T) {
	h := load(t, "final-read-failed.jsonl")
	h.Operations = append(h.Operations, history.Operation{Client: 5, Kind: history.Put, Key: "k0", Value: "x", Call: 40, Return: 50, Error: "timeout"})
	r := Validate(h, Options{Timeout: time.Second})
	if r.Incomplete || !slices.Equal(r.Unverified, []string{"k1"}) {
		t.Fatalf("incomplete = %v, unverified %v, failures %q", r.Incomplete, r.Unverified, r.Failures)
	}
}

// A linearizable history too long for a page of reasonable size gets none
// (it would only weigh on every run's artifacts); its verdict is the same.
func TestLongLinearizableHistoryGetsNoVisualization(t *testing.T) {
	var h history.History
	for i := 0; i <= maxVisualizedLinearizable; i++ {
		t0 := int64(i) * 10
		key := fmt.Sprintf("k%d", i%8)
		h.Operations = append(h.Operations, history.Operation{Kind: history.Put, Key: key, Value: fmt.Sprint(i), Call: t0, Return: t0 + 5})
	}
	end := int64(maxVisualizedLinearizable+1) * 10
	for k := range 8 {
		last := maxVisualizedLinearizable - (maxVisualizedLinearizable-k)%8
		h.Operations = append(h.Operations, history.Operation{Kind: history.Get, Key: fmt.Sprintf("k%d", k), Value: fmt.Sprint(last), Found: true, Call: end, Return: end + 5, Final: true})
	}
	vis := filepath.Join(t.TempDir(), "vis.html")
	r := Validate(h, Options{Timeout: time.Minute, VisualizationPath: vis})
	if r.Linearizability != Linearizable || !r.Passed() {
		t.Fatalf("linearizability = %s, failures %q; want a linearizable pass", r.Linearizability, r.Failures)
	}
	if _, err := os.Stat(vis); err == nil || r.Visualization != "" {
		t.Errorf("visualization %q written for %d operations", r.Visualization, len(h.Operations))
	}
}
