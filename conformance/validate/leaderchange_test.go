package validate

import (
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// The drain check's failing run: two puts sent at the same instant while
// the evicted member's leadership moved hung until their deadline, while
// every other client went on. etcd dropped them without telling the
// member that forwarded them; the operator could not have prevented it.
func TestIndeterminateFailureDuringLeaderChangeIsExcused(t *testing.T) {
	ms := int64(time.Millisecond)
	answer := func(c int, v string, at int64, term uint64) history.Operation {
		return history.Operation{Client: c, Kind: history.Put, Key: "k", Value: v, Call: at * ms, Return: at*ms + ms, Term: term}
	}
	hung := func(c int, v string, at int64, class history.ErrorClass) history.Operation {
		return history.Operation{Client: c, Kind: history.Put, Key: "k", Value: v, Call: at * ms, Return: (at + 5000) * ms,
			Error: "context deadline exceeded", ErrorClass: class}
	}
	final := func(at int64) history.Operation {
		return history.Operation{Client: 9, Kind: history.Get, Key: "k", Value: "last", Found: true, Call: at * ms, Return: at*ms + ms, Final: true}
	}
	cases := []struct {
		name       string
		ops        []history.Operation
		excused    int
		afterRetry int
	}{
		{name: "new term first seen while the put hung",
			ops:     []history.Operation{answer(1, "a", 0, 2), hung(0, "x", 100, history.Indeterminate), answer(1, "b", 300, 3), answer(1, "last", 6000, 3)},
			excused: 1},
		{name: "new term seen just before the call: a member may still forward to the old leader",
			ops:     []history.Operation{answer(1, "a", 0, 2), answer(1, "b", 300, 3), hung(0, "x", 900, history.Indeterminate), answer(1, "last", 6000, 3)},
			excused: 1},
		{name: "no leader change",
			ops:        []history.Operation{answer(1, "a", 0, 2), hung(0, "x", 100, history.Indeterminate), answer(1, "last", 6000, 2)},
			afterRetry: 1},
		{name: "leader change long before the call",
			ops:        []history.Operation{answer(1, "a", 0, 2), answer(1, "b", 300, 3), hung(0, "x", 2000, history.Indeterminate), answer(1, "last", 8000, 3)},
			afterRetry: 1},
		{name: "leader change after the deadline",
			ops:        []history.Operation{answer(1, "a", 0, 2), hung(0, "x", 100, history.Indeterminate), answer(1, "b", 5200, 3), answer(1, "last", 6000, 3)},
			afterRetry: 1},
		{name: "a definite failure is not excused: it could have been retried",
			ops:        []history.Operation{answer(1, "a", 0, 2), hung(0, "x", 100, history.Definite), answer(1, "b", 300, 3), answer(1, "last", 6000, 3)},
			afterRetry: 1},
		{name: "an error a member returned is not excused: it is no silent drop",
			ops: []history.Operation{answer(1, "a", 0, 2), {Client: 0, Kind: history.Put, Key: "k", Value: "x", Call: 100 * ms, Return: 400 * ms,
				Error: "rpc error: code = Unknown desc = raft: stopped", ErrorClass: history.Indeterminate}, answer(1, "b", 300, 3), answer(1, "last", 6000, 3)},
			afterRetry: 1},
		{name: "the first term seen is no change",
			ops:        []history.Operation{hung(0, "x", 0, history.Indeterminate), answer(1, "a", 100, 2), answer(1, "last", 6000, 2)},
			afterRetry: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := history.History{Operations: append(tc.ops, final(9000))}
			s := ComputeStats(h)
			if s.DuringLeaderChange != tc.excused || s.FailuresAfterRetry != tc.afterRetry {
				t.Errorf("during leader change %d, after retry %d; want %d, %d", s.DuringLeaderChange, s.FailuresAfterRetry, tc.excused, tc.afterRetry)
			}
			r := Validate(h, Options{Timeout: 5 * time.Second, ClientErrors: NoErrorsAfterRetry})
			if r.Passed() != (tc.afterRetry == 0) {
				t.Errorf("after-retry: passed = %v, failures %q", r.Passed(), r.Failures)
			}
			// Under "none" every client-visible error counts, excused or not.
			if r := Validate(h, Options{Timeout: 5 * time.Second, ClientErrors: NoClientErrors}); r.Passed() {
				t.Errorf("none: passed with a failed request")
			}
		})
	}
}
