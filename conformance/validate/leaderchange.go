package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// DefaultElectionTimeout is etcd's own default --election-timeout, used
// when the cluster's is not known.
const DefaultElectionTimeout = time.Second

// LeaderChange is the first answer a history saw from a higher raft term.
type LeaderChange struct {
	// At is the return time of that answer, in the history's clock.
	At int64 `json:"at"`
	// Term is the new term.
	Term uint64 `json:"term"`
}

func (c LeaderChange) String() string {
	return fmt.Sprintf("term %d first seen at %s", c.Term, time.Duration(c.At).Round(time.Millisecond))
}

// leaderChanges finds when the history first saw each higher raft term:
// the return times of the successful answers that carried a term higher
// than any answer before them. The first term seen is no change.
func leaderChanges(h history.History) []LeaderChange {
	var answers []history.Operation
	for _, op := range h.Operations {
		if op.Succeeded() && op.Term > 0 {
			answers = append(answers, op)
		}
	}
	slices.SortStableFunc(answers, func(a, b history.Operation) int { return cmp.Compare(a.Return, b.Return) })
	var changes []LeaderChange
	var highest uint64
	for _, op := range answers {
		if op.Term > highest {
			if highest > 0 {
				changes = append(changes, LeaderChange{At: op.Return, Term: op.Term})
			}
			highest = op.Term
		}
	}
	return changes
}

// excusable reports whether a failure may be a proposal etcd dropped in a
// leader change: a timeout, sent within one election timeout of the moment
// the new term was first seen, and still in flight then. etcd drops the
// proposals a member forwarded to a leader that is stepping down (a
// leadership transfer, as every graceful stop of a leader does, or an
// election) without telling the member, whose caller then waits for its
// deadline (etcd-io/etcd#8975, #5214). Only proposals in flight around the
// step-down are dropped: the member learns of the new leader within an
// election timeout (the new leader's first heartbeat, or the member's own
// election), and forwards to it from then on. A request sent earlier was
// stuck for another reason (no quorum), one sent later reached the new
// leader. Only a timeout: an error a member returned ("raft: stopped" from
// a member removed while it served) says the operator's step reached the
// client, leader or not.
func excusable(op history.Operation, c LeaderChange, electionTimeout time.Duration) bool {
	if op.Class() != history.Indeterminate || !timedOut(op.Error) {
		return false
	}
	et := int64(electionTimeout)
	return op.Call >= c.At-et && op.Call <= c.At+et && c.At <= op.Return
}

// timedOut tells a client's own deadline, or etcd's wait for a proposal
// giving up, from an error a member returned.
func timedOut(err string) bool {
	return strings.Contains(err, "deadline exceeded") || strings.Contains(err, "request timed out")
}

// Excused is a failure left out of the after-retry count, with the leader
// change that excuses it.
type Excused struct {
	Op     history.Operation `json:"op"`
	Change LeaderChange      `json:"change"`
}

func (e Excused) String() string {
	return fmt.Sprintf("%s, excused by the leader change to %s", describeError(e.Op), e.Change)
}

// excuse pairs failures with the leader changes that excuse them: each
// change excuses at most one failure per client (a client has one request
// in flight, so one change drops at most one of its proposals), the
// earliest change that can, in the order the failures were sent. It
// returns the indexes in h.Operations of the excused failures.
func excuse(h history.History, candidates []int, changes []LeaderChange, electionTimeout time.Duration) map[int]Excused {
	order := slices.Clone(candidates)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(h.Operations[a].Call, h.Operations[b].Call) })
	used := map[[2]int]bool{} // {client, change} already excused one failure
	out := map[int]Excused{}
	for _, i := range order {
		op := h.Operations[i]
		for j, c := range changes {
			if used[[2]int{op.Client, j}] || !excusable(op, c, electionTimeout) {
				continue
			}
			used[[2]int{op.Client, j}] = true
			out[i] = Excused{Op: op, Change: c}
			break
		}
	}
	return out
}
