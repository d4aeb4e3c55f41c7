package validate

import (
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// etcd 3.4 fails the requests in flight on a member it stops: that
// excuses a closed-connection failure of a request in flight when a member
// of that release was stopped, one per client and stop, and nothing else
// (before: any such failure in the whole hop, up to one per member a client).
func TestUndrainedStopExcusesOnlyRequestsInFlightAtTheStop(t *testing.T) {
	ms := int64(time.Millisecond)
	closed := func(c int, from, to int64) history.Operation {
		return history.Operation{Client: c, Kind: history.Put, Key: "k", Value: "v", Call: from * ms, Return: to * ms,
			Error: "rpc error: code = Unavailable desc = error reading from server: EOF", ErrorClass: history.Indeterminate}
	}
	stops := []time.Duration{10 * time.Second, 30 * time.Second}
	cases := []struct {
		name    string
		ops     []history.Operation
		excused int
	}{
		{"in flight at the stop", []history.Operation{closed(0, 9_990, 10_010)}, 1},
		{"sent a moment after the signal, on the stopping member", []history.Operation{closed(0, 10_500, 10_600)}, 1},
		{"one client, one failure at each stop", []history.Operation{closed(0, 9_990, 10_010), closed(0, 29_990, 30_010)}, 2},
		{"long after any stop", []history.Operation{closed(0, 20_000, 20_010)}, 0},
		{"two failures of one client at one stop: one request was in flight", []history.Operation{closed(0, 9_990, 10_010), closed(0, 10_020, 10_030)}, 1},
		{"another error class during the stop", []history.Operation{{Client: 0, Kind: history.Put, Key: "k", Value: "v", Call: 9_990 * ms, Return: 10_010 * ms,
			Error: "context deadline exceeded", ErrorClass: history.Indeterminate}}, 0},
	}
	for _, tc := range cases {
		left, excused := excuseUndrained(tc.ops, stops)
		if len(excused) != tc.excused || len(left) != len(tc.ops)-tc.excused {
			t.Errorf("%s: %d excused, %d left; want %d excused", tc.name, len(excused), len(left), tc.excused)
		}
	}
}
