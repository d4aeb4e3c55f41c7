package validate

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// ClientErrors is how a phase judges failed requests (final reads aside).
// Every failure is listed in Result.Errors and counted in Stats whatever
// the policy.
type ClientErrors string

const (
	// NoClientErrors fails the history on any failed request. It is the
	// zero value's meaning.
	NoClientErrors ClientErrors = "none"
	// NoErrorsAfterRetry fails the history on any failure an application
	// that retries a definite failure once would have seen: the traffic
	// client does exactly that, so a definite failure followed by a
	// successful retry is forgiven, and every other failure (an
	// indeterminate one, a failed retry) counts, except an indeterminate
	// one during a leader change (see duringLeaderChange).
	NoErrorsAfterRetry ClientErrors = "after-retry"
	// AllowClientErrors keeps failed requests out of the verdict. For
	// phases where the suite itself kills a member: requests in flight on
	// it fail whatever the operator does, so only linearizability, lost
	// writes and the write gap judge the operator there.
	AllowClientErrors ClientErrors = "allowed"
)

// ParseClientErrors reads a policy name; "" is NoClientErrors.
func ParseClientErrors(s string) (ClientErrors, error) {
	switch p := ClientErrors(s); p {
	case "":
		return NoClientErrors, nil
	case NoClientErrors, NoErrorsAfterRetry, AllowClientErrors:
		return p, nil
	}
	return "", fmt.Errorf("%q is not one of %s, %s, %s", s, NoClientErrors, NoErrorsAfterRetry, AllowClientErrors)
}

func describeError(op history.Operation) string {
	retry := ""
	if op.Retry {
		retry = " (retry)"
	}
	return fmt.Sprintf("client %d %s(%s)%s: %s [%s]", op.Client, op.Kind, op.Key, retry, op.Error, op.Class())
}

// closedConnection is the gRPC client's error for a request in flight on a
// server that closed its connection: what etcd 3.4 members return to every
// request they were serving when they stop (measured: 8 clients putting to
// one member, docker stop gave 8 of these on 3.4.25, none on 3.5.21).
const closedConnection = "error reading from server: EOF"

// undrainedWindow is how far from a stop's moment a closed-connection
// failure still counts as in flight at it: the stop's moment is known to
// the API server's second (a pod's deletion) or the container's exit, and
// etcd 3.4 closes its gRPC server within a second of the signal; a request
// sent in that time to the stopping member fails the same way.
const undrainedWindow = 2 * time.Second

// excuseUndrained takes out of counted the closed-connection failures of
// requests in flight when a member of a release that does not drain was
// stopped (stops: the moments, since the history's zero): one per client
// and stop, as a client has one request in flight. Every other failure,
// and every such failure away from a stop, still counts.
func excuseUndrained(counted []history.Operation, stops []time.Duration) (left, excused []history.Operation) {
	type clientStop struct{ client, stop int }
	used := map[clientStop]bool{}
	for _, op := range counted {
		stop := -1
		if strings.Contains(op.Error, closedConnection) {
			for i, at := range stops {
				if op.Call <= int64(at+undrainedWindow) && op.Return >= int64(at-undrainedWindow) && !used[clientStop{op.Client, i}] {
					stop = i
					break
				}
			}
		}
		if stop < 0 {
			left = append(left, op)
			continue
		}
		used[clientStop{op.Client, stop}] = true
		excused = append(excused, op)
	}
	return left, excused
}

// afterRetry is what the NoErrorsAfterRetry policy judges in a history.
type afterRetry struct {
	// Counted are the failures an application retrying a definite failure
	// once would have seen, less the excused ones, in history order.
	Counted []history.Operation
	// Excused are the timeouts a leader change excuses (see excuse).
	Excused []Excused
	// LeaderChanges are every leader change the history saw.
	LeaderChanges []LeaderChange
}

// judgeAfterRetry sorts the failed requests (final reads aside): a
// definite failure the client retried is replaced by its retry (the
// traffic client retries right away, so the retry is the same client's
// next operation); a timeout sent around a leader change is excused, at
// most one per client and change (see excuse); every other failure counts.
func judgeAfterRetry(h history.History, electionTimeout time.Duration) afterRetry {
	retried := map[int]bool{} // index of a definite failure that was retried
	prev := map[int]int{}     // client -> index of its previous operation
	for i, op := range h.Operations {
		if op.Final {
			continue
		}
		if j, ok := prev[op.Client]; ok && op.Retry {
			if p := h.Operations[j]; p.Class() == history.Definite && !p.Retry {
				retried[j] = true
			}
		}
		prev[op.Client] = i
	}
	var failed []int
	for i, op := range h.Operations {
		if !op.Final && !op.Succeeded() && !retried[i] {
			failed = append(failed, i)
		}
	}
	out := afterRetry{LeaderChanges: leaderChanges(h)}
	excused := excuse(h, failed, out.LeaderChanges, electionTimeout)
	for _, i := range failed {
		if e, ok := excused[i]; ok {
			out.Excused = append(out.Excused, e)
			continue
		}
		out.Counted = append(out.Counted, h.Operations[i])
	}
	return out
}
