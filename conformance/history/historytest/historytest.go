// Package historytest builds histories for tests of the checks: clients
// running concurrently against a linearizable register, so the checks see
// realistic overlap rather than hand-ordered operations.
package historytest

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Register is a linearizable history of clients putting and getting one
// key, opsPerClient each, one request in flight per client, with random
// overlapping durations; it ends with a final read of the key. The same
// seed gives the same history.
func Register(key string, clients, opsPerClient int, seed uint64) history.History {
	rnd := rand.New(rand.NewPCG(seed, 1))
	type point struct {
		at int64
		op int
	}
	var ops []history.Operation
	var points []point
	var end int64
	for c := range clients {
		t := int64(rnd.IntN(10))
		for i := range opsPerClient {
			d := int64(1 + rnd.IntN(20))
			op := history.Operation{Client: c, Kind: history.Get, Key: key, Call: t, Return: t + d}
			if rnd.IntN(2) == 0 {
				op.Kind, op.Value = history.Put, fmt.Sprintf("c%d-%d", c, i)
			}
			// The operation takes effect somewhere between call and return.
			points = append(points, point{t + rnd.Int64N(d+1), len(ops)})
			ops = append(ops, op)
			t += d + int64(rnd.IntN(5))
		}
		end = max(end, t)
	}
	sort.SliceStable(points, func(i, j int) bool { return points[i].at < points[j].at })
	var value string
	var found bool
	for _, p := range points {
		op := &ops[p.op]
		if op.Kind == history.Put {
			value, found = op.Value, true
		} else {
			op.Value, op.Found = value, found
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Return < ops[j].Return })
	ops = append(ops, history.Operation{Client: clients, Kind: history.Get, Key: key, Value: value, Found: found, Call: end + 1, Return: end + 2, Final: true})
	return history.History{Operations: ops}
}

// FailedPuts are n puts to key, each from a client of its own, called one
// time unit apart from start, that failed at once with an error of the
// given class. Their values ("failed-<i>") are never read.
func FailedPuts(key string, n int, start int64, class history.ErrorClass) []history.Operation {
	ops := make([]history.Operation, 0, n)
	for i := range n {
		t := start + int64(i)
		ops = append(ops, history.Operation{Client: 10_000 + i, Kind: history.Put, Key: key, Value: fmt.Sprintf("failed-%d", i),
			Call: t, Return: t + 1, Error: "etcdserver: request timed out", ErrorClass: class})
	}
	return ops
}
