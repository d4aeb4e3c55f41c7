package validate

import (
	"fmt"

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

// failuresAfterRetry counts the failed requests (final reads aside) that an
// application retrying a definite failure once would have seen: all of
// them except a definite failure the client retried, whose retry is
// counted instead, and an indeterminate failure during a leader change
// (see duringLeaderChange), which etcd causes whatever the operator does.
// The traffic client retries right away, so the retry is the same client's
// next operation. It also returns how many failures a leader change
// excused.
func failuresAfterRetry(h history.History) (n int, first history.Operation, duringChange int) {
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
	changes := leaderChanges(h)
	for i, op := range h.Operations {
		if op.Final || op.Succeeded() || retried[i] {
			continue
		}
		if duringLeaderChange(op, changes) {
			duringChange++
			continue
		}
		if n == 0 {
			first = op
		}
		n++
	}
	return n, first, duringChange
}
