package validate

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// LeaderChangeSlack is how long before a request's call a leader change
// still counts as happening during it: a member goes on forwarding
// proposals to a leader that is gone until it hears from the new one,
// which is at most an election timeout (etcd's default: 1 s) after the
// first answer with the new term.
const LeaderChangeSlack = time.Second

// leaderChanges finds when the history first saw each higher raft term:
// the return times of the successful answers that carried a term higher
// than any answer before them. The first term seen is no change.
func leaderChanges(h history.History) []int64 {
	var answers []history.Operation
	for _, op := range h.Operations {
		if op.Succeeded() && op.Term > 0 {
			answers = append(answers, op)
		}
	}
	slices.SortStableFunc(answers, func(a, b history.Operation) int { return cmp.Compare(a.Return, b.Return) })
	var changes []int64
	var highest uint64
	for _, op := range answers {
		if op.Term > highest {
			if highest > 0 {
				changes = append(changes, op.Return)
			}
			highest = op.Term
		}
	}
	return changes
}

// duringLeaderChange reports whether a failure is a timeout that spans a
// leader change. etcd drops the proposals a member forwarded to a leader
// that is stepping down (a leadership transfer, as every graceful stop of
// a leader does, or an election) without telling the member, whose caller
// then waits for its deadline (etcd-io/etcd#8975, #5214): such a timeout
// is etcd's, not the operator's, and it tells nothing the write gap and
// the linearizability check do not already judge. Only a timeout: an
// error a member returned ("raft: stopped" from a member removed while it
// served) says the operator's step reached the client, leader or not.
func duringLeaderChange(op history.Operation, changes []int64) bool {
	if op.Class() != history.Indeterminate || !timedOut(op.Error) {
		return false
	}
	from := op.Call - int64(LeaderChangeSlack)
	i, _ := slices.BinarySearch(changes, from)
	return i < len(changes) && changes[i] <= op.Return
}

// timedOut tells a client's own deadline, or etcd's wait for a proposal
// giving up, from an error a member returned.
func timedOut(err string) bool {
	return strings.Contains(err, "deadline exceeded") || strings.Contains(err, "request timed out")
}
