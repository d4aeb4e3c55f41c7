package validate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// The crafted runs below have one client putting, one put per revision
// from..to, each acknowledged with its revision; the key and value of a
// revision's put follow from the revision. Watcher 0 watches p/.
const watchedPrefix = "p/"

func putKey(rev int64) string   { return fmt.Sprintf("%sk%d", watchedPrefix, rev%2) }
func putValue(rev int64) string { return fmt.Sprintf("v%d", rev) }

// watchHistory is the run's puts, their final reads and the watch records,
// timed in the order given.
func watchHistory(from, to int64, records ...history.WatchRecord) history.History {
	var h history.History
	t := int64(0)
	for rev := from; rev <= to; rev++ {
		h.Operations = append(h.Operations, history.Operation{Kind: history.Put, Key: putKey(rev), Value: putValue(rev), Call: t, Return: t + 5, Revision: rev})
		t += 10
	}
	for rev := to - 1; rev <= to; rev++ {
		h.Operations = append(h.Operations, history.Operation{Client: 1, Kind: history.Get, Key: putKey(rev), Value: putValue(rev), Found: true, Call: t, Return: t + 5, Final: true})
	}
	for i, rec := range records {
		rec.At = int64(i)
		h.Watches = append(h.Watches, rec)
	}
	return h
}

func start(rev int64) history.WatchRecord {
	return history.WatchRecord{Start: &history.WatchStart{Prefix: watchedPrefix, Revision: rev}}
}

func resume(rev int64) history.WatchRecord {
	return history.WatchRecord{Start: &history.WatchStart{Prefix: watchedPrefix, Revision: rev, Resume: true}}
}

// got is one response carrying the puts of the given revisions.
func got(revs ...int64) history.WatchRecord {
	var evs []history.WatchEvent
	for _, rev := range revs {
		evs = append(evs, event(rev, putKey(rev), putValue(rev)))
	}
	return gotEvents(evs...)
}

func event(rev int64, key, value string) history.WatchEvent {
	return history.WatchEvent{Type: history.EventPut, Key: key, Value: value, ModRevision: rev, CreateRevision: 1}
}

func gotEvents(evs ...history.WatchEvent) history.WatchRecord {
	return history.WatchRecord{Response: &history.WatchResponse{Revision: evs[len(evs)-1].ModRevision, Events: evs}}
}

func progress(rev int64) history.WatchRecord {
	return history.WatchRecord{Response: &history.WatchResponse{Revision: rev, Progress: true}}
}

func compacted(rev int64) history.WatchRecord {
	return history.WatchRecord{Response: &history.WatchResponse{Canceled: true, CompactRevision: rev, Error: "etcdserver: mvcc: required revision has been compacted"}}
}

func TestCraftedWatchStreams(t *testing.T) {
	cases := []struct {
		name    string
		history history.History
		// mention are what one failure must say; none means a pass.
		mention    []string
		incomplete bool
	}{
		{name: "every put once, in order, across resumes",
			history: watchHistory(10, 14, start(10), got(10), got(11), resume(12), got(12, 13), resume(14), got(14))},
		{name: "a gap",
			history: watchHistory(10, 14, start(10), got(10), got(11), got(13), got(14)),
			mention: []string{"watcher 0", "revision 12", "got 11 before it and 13 after"}},
		{name: "a duplicate",
			history: watchHistory(10, 14, start(10), got(10, 11), got(12), got(12), got(13, 14)),
			mention: []string{"watcher 0", "unique", "revision 12", "twice"}},
		{name: "a transaction split across responses",
			history: watchHistory(10, 14, start(10), got(10, 11), gotEvents(event(12, "p/k0", "v12")), gotEvents(event(12, "p/k1", "t12")), got(13, 14)),
			mention: []string{"watcher 0", "atomic", "revision 12"}},
		{name: "a resume the server answers from past the revision asked",
			history: watchHistory(10, 14, start(10), got(10, 11), resume(12), got(13), got(14)),
			mention: []string{"watcher 0", "revision 12", "got 11 before it and 13 after", "resumed at revision 12 in between"}},
		{name: "a resume that asks past the revision after the last event",
			history: watchHistory(10, 14, start(10), got(10, 11), resume(13), got(13, 14)),
			mention: []string{"watcher 0", "revision 12", "resumed at revision 13"}},
		{name: "a revision that goes back across a resume",
			history: watchHistory(10, 14, start(10), got(10, 11, 12), resume(13), got(11), got(13, 14)),
			mention: []string{"watcher 0", "ordered", "revision 11", "after revision 12", "resumed at revision 13"}},
		{name: "events out of order in one response",
			history: watchHistory(10, 14, start(10), got(10, 12, 11), got(13, 14)),
			mention: []string{"watcher 0", "ordered", "revision 11 after revision 12"}},
		{name: "a new stream may start again below what the last one got",
			history: watchHistory(10, 14, start(10), got(10, 11, 12), start(10), got(10, 11), got(12, 13, 14))},
		{name: "a progress notification vouches for the puts before it",
			history: watchHistory(10, 14, start(10), got(10), got(11), progress(14)),
			mention: []string{"watcher 0", "revision 13", "nothing after it up to revision 14"}},
		{name: "a put's revision delivered with another value",
			history: watchHistory(10, 14, start(10), got(10, 11), gotEvents(event(12, "p/k0", "v9")), got(13, 14)),
			mention: []string{"watcher 0", "revision 12", `"v9"`, `"v12"`}},
		{name: "an event outside the watched prefix",
			history: watchHistory(10, 14, start(10), got(10, 11), gotEvents(event(12, "p/k0", "v12"), event(12, "q/k0", "x")), got(13, 14)),
			mention: []string{"watcher 0", "q/k0", "revision 12", "outside"}},
		{name: "a compaction the stream was told of excuses what it compacted",
			history: watchHistory(10, 14, start(10), got(10), resume(11), compacted(13), resume(13), got(13), got(14))},
		{name: "resumes that got nothing, then one that skips a revision",
			history: watchHistory(10, 14, start(10), got(10, 11), resume(12), resume(12), resume(13), got(13, 14)),
			mention: []string{"watcher 0", "revision 12", "resumed at revision 12 (2 times) and at revision 13 in between"}},
		// The watcher stops there: nothing under the prefix is left unchecked.
		{name: "a compaction that took the last put",
			history: watchHistory(10, 14, start(10), got(10, 11, 12), resume(13), compacted(15))},
		{name: "a compaction excuses nothing after the compact revision",
			history: watchHistory(10, 14, start(10), got(10), resume(11), compacted(13), resume(13), got(14)),
			mention: []string{"watcher 0", "revision 13", "resumed at revision 11 and at revision 13 in between"}},
		// A watcher that never got as far as the writes went checked only
		// part of them: the run could not be fully judged.
		{name: "a stream that ends before the last put",
			history: watchHistory(10, 14, start(10), got(10, 11)), incomplete: true,
			mention: []string{"watcher 0", "revision 11", "revision 14"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Validate(tc.history, Options{Timeout: 10 * time.Second})
			t.Logf("failures: %q", r.Failures)
			if len(tc.mention) == 0 {
				if !r.Passed() {
					t.Fatalf("failures %q, want a pass", r.Failures)
				}
				return
			}
			if r.Passed() || r.Incomplete != tc.incomplete {
				t.Fatalf("passed = %v, incomplete = %v (want %v), failures %q", r.Passed(), r.Incomplete, tc.incomplete, r.Failures)
			}
			for _, f := range r.Failures {
				if containsAll(f, tc.mention) {
					return
				}
			}
			t.Errorf("no failure says all of %q: %q", tc.mention, r.Failures)
		})
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// The counts the report shows, of two watchers' streams, and which
// watcher a violation is in.
func TestWatchCounts(t *testing.T) {
	second := func(rec history.WatchRecord) history.WatchRecord { rec.Watcher = 1; return rec }
	h := watchHistory(10, 14,
		start(10), second(start(10)), got(10), second(got(10, 11)), progress(10),
		resume(11), compacted(13), resume(13), second(got(13)), got(13, 14), second(got(14)))
	r := Validate(h, Options{Timeout: 10 * time.Second})
	if r.Watch == nil {
		t.Fatal("no watch verdict for a history with watch records")
	}
	want := WatchStats{Watchers: 2, Streams: 2, Resumes: 2, Events: 7, ProgressNotifications: 1, Compactions: 1, Violations: 1}
	if r.Watch.Stats != want {
		t.Errorf("stats = %+v, want %+v", r.Watch.Stats, want)
	}
	if len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "watcher 1: reliable: put(p/k0, v12) at revision 12 never delivered") {
		t.Errorf("failures %q, want watcher 1 missing revision 12 only", r.Failures)
	}
	if r := Validate(load(t, "linearizable.jsonl"), Options{Timeout: 10 * time.Second}); r.Watch != nil {
		t.Errorf("a history without watchers got a watch verdict: %+v", r.Watch)
	}
}

// A broken stream lists at most maxWatchFailures violations among the
// failures, and says how many more there are.
func TestManyWatchViolationsAreCounted(t *testing.T) {
	h := watchHistory(10, 40, start(10), got(10), progress(40))
	r := Validate(h, Options{Timeout: 10 * time.Second})
	if r.Watch == nil || r.Watch.Stats.Violations != 30 || len(r.Failures) != maxWatchFailures+1 ||
		!strings.Contains(r.Failures[maxWatchFailures], "20 more violations") {
		t.Errorf("failures %q, watch %+v; want 10 listed and 20 more counted", r.Failures, r.Watch)
	}
}
