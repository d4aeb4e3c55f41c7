package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// puts are the acknowledged puts of a history, sorted by revision: the
// writes known to have taken effect, and where. A failed put may have
// taken effect too, at a revision nobody learnt: its event is neither owed
// nor refused.
type puts []history.Operation

func acknowledgedPuts(h history.History) puts {
	var ps puts
	for _, op := range h.Operations {
		if op.Kind == history.Put && op.Succeeded() {
			ps = append(ps, op)
		}
	}
	slices.SortStableFunc(ps, func(a, b history.Operation) int { return cmp.Compare(a.Revision, b.Revision) })
	return ps
}

// unrevisioned counts the puts acknowledged without their revision, by a
// traffic client that did not record it: no stream can be checked for them.
func (ps puts) unrevisioned() int {
	n := 0
	for _, p := range ps {
		if p.Revision == 0 {
			n++
		}
	}
	return n
}

// last is the highest revision of a put under prefix (0: none).
func (ps puts) last(prefix string) int64 {
	for i := len(ps) - 1; i >= 0; i-- {
		if strings.HasPrefix(ps[i].Key, prefix) {
			return ps[i].Revision
		}
	}
	return 0
}

// judgeReliable checks that every acknowledged put under the stream's
// prefix from the revision it first asked to the last it saw was
// delivered with the value written, unless ErrCompacted told the stream
// its revision was gone. Resumes need no rule of their own: a resume
// that skips a revision, whoever skipped it, leaves that put undelivered.
func (s *stream) judgeReliable(ps puts, res *WatchResult) {
	var got []int64
	for id := range s.delivered {
		got = append(got, id.revision)
	}
	slices.Sort(got)
	for _, p := range ps {
		switch {
		case !strings.HasPrefix(p.Key, s.prefix) || p.Revision < s.from || p.Revision > s.seen || s.toldOf(p.Revision):
			continue
		}
		value, ok := s.delivered[eventID{p.Revision, p.Key}]
		switch {
		case !ok:
			res.violate(s.watcher, Reliable, "put(%s, %s) at revision %d never delivered (%s)", p.Key, p.Value, p.Revision, s.around(got, p.Revision))
		case value != p.Value:
			res.violate(s.watcher, Reliable, "revision %d of %s delivered with %q, the put at that revision wrote %q", p.Revision, p.Key, value, p.Value)
		}
	}
}

func (s *stream) toldOf(rev int64) bool {
	return slices.ContainsFunc(s.told, func(t span) bool { return t.from <= rev && rev <= t.to })
}

// around places a missing revision among those the stream got and the
// resumes it made, which is where to look for why it is missing.
func (s *stream) around(got []int64, rev int64) string {
	i, _ := slices.BinarySearch(got, rev)
	before, after := s.from-1, s.seen
	where := fmt.Sprintf("the stream asked from revision %d", s.from)
	if i > 0 {
		before = got[i-1]
		where = fmt.Sprintf("it got %d before it", before)
	}
	if i < len(got) {
		after = got[i]
		where += fmt.Sprintf(" and %d after", after)
	} else {
		where += fmt.Sprintf(" and nothing after it up to revision %d, the last it saw", s.seen)
	}
	var resumed []string
	for i, n := 0, 0; i < len(s.resumes); i++ {
		r := s.resumes[i]
		if r <= before || r > after {
			continue
		}
		// A stream that got nothing resumes from the same revision again.
		if n++; i+1 < len(s.resumes) && s.resumes[i+1] == r {
			continue
		}
		if n > 1 {
			resumed = append(resumed, fmt.Sprintf("at revision %d (%d times)", r, n))
		} else {
			resumed = append(resumed, fmt.Sprintf("at revision %d", r))
		}
		n = 0
	}
	if len(resumed) > 0 {
		where += "; it resumed " + strings.Join(resumed, " and ") + " in between"
	}
	return where
}
