package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
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
		want         Linearizability
		lost         int
		failsMention []string
	}{
		{file: "linearizable.jsonl", want: Linearizable},
		// The put timed out but took effect: uncertain, so still linearizable,
		// yet the client saw an error, which the suite does not accept.
		{file: "failed-put-took-effect.jsonl", want: Linearizable, failsMention: []string{"1 client-visible errors"}},
		{file: "stale-read.jsonl", want: NotLinearizable, failsMention: []string{"not linearizable"}},
		{file: "lost-write.jsonl", want: NotLinearizable, lost: 2, failsMention: []string{"acknowledged write lost: put(k0, c1-1)", "acknowledged write lost: put(k1, c1-2)"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			vis := filepath.Join(t.TempDir(), "vis.html")
			r := Validate(load(t, tc.file), Options{Timeout: 10 * time.Second, VisualizationPath: vis})
			if r.Linearizability != tc.want {
				t.Errorf("linearizability = %s, want %s", r.Linearizability, tc.want)
			}
			if len(r.LostWrites) != tc.lost {
				t.Errorf("lost writes = %v, want %d", r.LostWrites, tc.lost)
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
			_, err := os.Stat(vis)
			if wrote := err == nil; wrote != (tc.want == NotLinearizable) {
				t.Errorf("visualization written = %v, want it only for a non-linearizable history", wrote)
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
				history.Operation{Client: c, Kind: history.Put, Key: "k", Value: string(rune('a'+c)) + strings.Repeat("x", i), Call: 0, Return: 1_000_000, Error: "timeout"})
		}
	}
	h.Operations = append(h.Operations, history.Operation{Kind: history.Get, Key: "k", Value: "a", Found: true, Call: 2_000_000, Return: 2_000_001, Final: true})
	r := Validate(h, Options{Timeout: time.Nanosecond})
	if r.Linearizability != Undecided {
		t.Fatalf("linearizability = %s, want undecided with a 1ns limit", r.Linearizability)
	}
	if r.Passed() {
		t.Fatalf("a history porcupine could not decide passed: %+v", r.Failures)
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
	opts := Options{Timeout: 10 * time.Second, AllowClientErrors: true}
	r := Validate(load(t, "failed-put-took-effect.jsonl"), opts)
	if !r.Passed() || len(r.Errors) != 1 {
		t.Errorf("failed put with errors allowed: passed = %v, errors = %v, failures = %v", r.Passed(), r.Errors, r.Failures)
	}
	if r := Validate(load(t, "lost-write.jsonl"), opts); r.Passed() {
		t.Error("a history that lost acknowledged writes passed with client errors allowed")
	}
}
