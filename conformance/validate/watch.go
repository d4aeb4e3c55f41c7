package validate

import (
	"fmt"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Guarantee names a promise etcd makes about watch streams
// (https://etcd.io/docs/v3.6/learning/api_guarantees/#watch-apis).
type Guarantee string

const (
	// Ordered: event revisions only go up along a stream, resumes
	// included; the events of one transaction share a revision.
	Ordered Guarantee = "ordered"
	// Unique: no event (revision and key) is delivered twice.
	Unique Guarantee = "unique"
	// Atomic: all events of a revision come in one response.
	Atomic Guarantee = "atomic"
	// Reliable: from the revision a stream asked to the last it saw, every
	// write that took effect under its prefix is delivered, as written,
	// unless the stream was told the range was compacted; a resume from the
	// revision after the last event is no exception (resumable).
	Reliable Guarantee = "reliable"
	// Filtered: a stream delivers only events under its prefix.
	Filtered Guarantee = "filtered"
)

// WatchViolation is one broken promise in one watcher's stream.
type WatchViolation struct {
	Watcher   int       `json:"watcher"`
	Guarantee Guarantee `json:"guarantee"`
	Detail    string    `json:"detail"`
}

func (v WatchViolation) String() string {
	return fmt.Sprintf("watcher %d: %s: %s", v.Watcher, v.Guarantee, v.Detail)
}

// WatchStats count what the watchers saw, for the report.
type WatchStats struct {
	Watchers int `json:"watchers"`
	// Streams counts logical streams: a resume continues one.
	Streams int `json:"streams"`
	Resumes int `json:"resumes"`
	Events  int `json:"events"`
	// ProgressNotifications are responses that vouch for every event up
	// to their revision.
	ProgressNotifications int `json:"progressNotifications"`
	// Compactions are streams cancelled with ErrCompacted: the events they
	// could no longer deliver were told, not lost.
	Compactions int `json:"compactions"`
	// Cancellations are streams cancelled for any other reason.
	Cancellations int `json:"cancellations"`
	Violations    int `json:"violations"`
}

// WatchResult is the verdict on the watch streams of a history.
type WatchResult struct {
	Stats WatchStats `json:"stats"`
	// Violations lists the first maxWatchViolations violations;
	// Stats.Violations counts them all.
	Violations []WatchViolation `json:"violations,omitempty"`
	// Unchecked says which streams stopped short of the last acknowledged
	// write: the writes after what they saw were not checked against them.
	Unchecked []string `json:"unchecked,omitempty"`
}

// maxWatchViolations bounds the violations kept: a stream that lost
// everything would otherwise list every write of the run.
const maxWatchViolations = 100

// Watches judges every watcher's streams in h against the acknowledged
// puts of h.
func Watches(h history.History) WatchResult {
	var res WatchResult
	puts := acknowledgedPuts(h)
	byWatcher := map[int][]history.WatchRecord{}
	var order []int
	for _, rec := range h.Watches {
		if _, ok := byWatcher[rec.Watcher]; !ok {
			order = append(order, rec.Watcher)
		}
		byWatcher[rec.Watcher] = append(byWatcher[rec.Watcher], rec)
	}
	res.Stats.Watchers = len(order)
	if n := puts.unrevisioned(); n > 0 && len(order) > 0 {
		res.Unchecked = append(res.Unchecked, fmt.Sprintf("%d acknowledged puts carry no revision, so no stream could be checked for them", n))
	}
	for _, w := range order {
		var s *stream
		for _, rec := range byWatcher[w] {
			switch {
			case rec.Start != nil && (s == nil || !rec.Start.Resume):
				if s != nil {
					s.judgeReliable(puts, &res)
				}
				s = newStream(w, *rec.Start)
				res.Stats.Streams++
			case rec.Start != nil:
				s.resume(*rec.Start)
				res.Stats.Resumes++
			case s != nil:
				s.respond(*rec.Response, &res)
			}
		}
		if s != nil {
			s.judgeReliable(puts, &res)
			if last := puts.last(s.prefix); s.seen < last {
				res.Unchecked = append(res.Unchecked, fmt.Sprintf("watcher %d saw up to revision %d, below the revision %d of the last acknowledged put under %s", w, s.seen, last, s.prefix))
			}
		}
	}
	return res
}

func (r *WatchResult) violate(watcher int, g Guarantee, format string, args ...any) {
	r.Stats.Violations++
	if len(r.Violations) < maxWatchViolations {
		r.Violations = append(r.Violations, WatchViolation{Watcher: watcher, Guarantee: g, Detail: fmt.Sprintf(format, args...)})
	}
}

// eventID is what makes an event unique in a stream.
type eventID struct {
	revision int64
	key      string
}

// stream is one watcher's logical stream as the records unfold: its start
// and its resumes, what it was delivered and what it was told.
type stream struct {
	watcher int
	prefix  string
	// from is the revision the stream first asked.
	from int64
	// next is the revision the stream is owed next: the one asked, or the
	// one after the last event.
	next int64
	// lastEvent is the highest event revision delivered (0: none yet).
	lastEvent int64
	// seen is the highest revision the stream vouched for: an event's, a
	// progress notification's, or the last one a compaction took.
	seen      int64
	delivered map[eventID]string
	// told are the revision ranges ErrCompacted said are gone.
	told []span
	// resumes are the revisions each resume asked, in order.
	resumes []int64
	// resumedAt is the revision asked by a resume whose first event has
	// not come yet (0: none).
	resumedAt int64
}

// span is a closed range of revisions.
type span struct{ from, to int64 }

func newStream(watcher int, st history.WatchStart) *stream {
	return &stream{watcher: watcher, prefix: st.Prefix, from: st.Revision, next: st.Revision, seen: st.Revision - 1, delivered: map[eventID]string{}}
}

func (s *stream) resume(st history.WatchStart) {
	s.next, s.resumedAt = st.Revision, st.Revision
	s.resumes = append(s.resumes, st.Revision)
}

// respond checks one response's events against the stream so far.
func (s *stream) respond(resp history.WatchResponse, res *WatchResult) {
	switch {
	case resp.Canceled && resp.CompactRevision != 0:
		res.Stats.Compactions++
		if resp.CompactRevision > s.next {
			s.told = append(s.told, span{s.next, resp.CompactRevision - 1})
			s.seen = max(s.seen, resp.CompactRevision-1)
		}
	case resp.Canceled:
		res.Stats.Cancellations++
	case resp.Progress:
		res.Stats.ProgressNotifications++
		s.seen = max(s.seen, resp.Revision)
	}
	for i, ev := range resp.Events {
		res.Stats.Events++
		id := eventID{ev.ModRevision, ev.Key}
		_, twice := s.delivered[id]
		if twice {
			res.violate(s.watcher, Unique, "revision %d of %s delivered twice", ev.ModRevision, ev.Key)
		}
		if !strings.HasPrefix(ev.Key, s.prefix) {
			res.violate(s.watcher, Filtered, "event at revision %d on %s, outside the watched prefix %s", ev.ModRevision, ev.Key, s.prefix)
		}
		switch {
		case i > 0 && ev.ModRevision < resp.Events[i-1].ModRevision:
			res.violate(s.watcher, Ordered, "revision %d after revision %d in one response", ev.ModRevision, resp.Events[i-1].ModRevision)
		case i == 0 && ev.ModRevision < s.lastEvent && s.resumedAt != 0:
			res.violate(s.watcher, Ordered, "revision %d (%s) after revision %d: the stream went back when it resumed at revision %d", ev.ModRevision, ev.Key, s.lastEvent, s.resumedAt)
		case i == 0 && ev.ModRevision < s.lastEvent:
			res.violate(s.watcher, Ordered, "revision %d (%s) after revision %d", ev.ModRevision, ev.Key, s.lastEvent)
		case i == 0 && ev.ModRevision == s.lastEvent && !twice:
			res.violate(s.watcher, Atomic, "revision %d split across responses: %s came in a later response than the revision's first events", ev.ModRevision, ev.Key)
		}
		s.delivered[id] = ev.Value
		s.lastEvent = max(s.lastEvent, ev.ModRevision)
		s.seen = max(s.seen, ev.ModRevision)
		s.next = max(s.next, ev.ModRevision+1)
		s.resumedAt = 0
	}
}
