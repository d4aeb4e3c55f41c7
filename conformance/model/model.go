// Package model is the sequential specification the history is checked
// against: a set of independent registers (one per key) with put and get.
package model

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Infinity is the return time of an operation whose outcome is unknown: a
// failed put may have been applied at any point after it was invoked.
const Infinity = int64(math.MaxInt64)

type input struct {
	kind  history.Kind
	key   string
	value string
}

type output struct {
	failed bool
	found  bool
	value  string
}

// register is the state of one key: its value, or absent.
type register struct {
	set   bool
	value string
}

// KV is the porcupine model, partitioned by key.
var KV = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() any { return register{} },
	Step: func(state, in, out any) (bool, any) {
		s, i, o := state.(register), in.(input), out.(output)
		switch i.kind {
		case history.Put:
			// A failed put is modelled as applied: its return time is
			// infinity, so linearizing it last is the same as "never applied".
			return true, register{set: true, value: i.value}
		case history.Get:
			if o.found != s.set {
				return false, s
			}
			return !o.found || o.value == s.value, s
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(output)
		switch {
		case i.kind == history.Put && o.failed:
			return fmt.Sprintf("put(%s, %s) -> unknown", i.key, i.value)
		case i.kind == history.Put:
			return fmt.Sprintf("put(%s, %s) -> ok", i.key, i.value)
		case o.found:
			return fmt.Sprintf("get(%s) -> %s", i.key, o.value)
		default:
			return fmt.Sprintf("get(%s) -> <absent>", i.key)
		}
	},
	DescribeState: func(state any) string {
		s := state.(register)
		if !s.set {
			return "<absent>"
		}
		return s.value
	},
}

func partitionByKey(ops []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var order []string
	for _, op := range ops {
		k := op.Input.(input).key
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	parts := make([][]porcupine.Operation, 0, len(order))
	for _, k := range order {
		parts = append(parts, byKey[k])
	}
	return parts
}

// Left counts the failed puts Operations leaves out of the check.
type Left struct {
	// Definite puts failed definitely: they were not applied.
	Definite int
	// Unobserved puts failed indeterminately and no read saw their value.
	Unobserved int
}

// Operations converts a history into porcupine operations. Failed gets
// are dropped (they observed nothing). Of the failed puts:
//
//   - definite failures are dropped: the client was told the put was not
//     applied, so modelling it as never applied is the exact semantics and
//     a tighter check than maybe-applied (a read that sees its value is
//     then not linearizable);
//   - indeterminate failures whose value no successful read (final reads
//     included) observed are dropped too. This is sound: such a put P
//     returns at Infinity, so in any linearization it can be moved to the
//     very end, after every read, where it changes nothing anyone saw; and
//     a linearization that contains P with no read of its value stays
//     legal with P removed. So the history is linearizable with P exactly
//     when it is without P, and the verdict is unchanged. Without this,
//     a burst of fast-failing puts during an election leaves porcupine
//     many concurrent maybe-applied writes to order and it runs out of
//     time on a history that is obviously fine;
//   - the other indeterminate failures return at Infinity: they may have
//     been applied at any point after they were invoked.
func Operations(h history.History) ([]porcupine.Operation, Left) {
	observed := map[[2]string]bool{} // key, value
	for _, op := range h.Operations {
		if op.Kind == history.Get && op.Succeeded() && op.Found {
			observed[[2]string{op.Key, op.Value}] = true
		}
	}
	var left Left
	ops := make([]porcupine.Operation, 0, len(h.Operations))
	for _, op := range h.Operations {
		switch {
		case op.Kind == history.Get && !op.Succeeded():
			continue
		case op.Kind == history.Put && op.Class() == history.Definite:
			left.Definite++
			continue
		case op.Kind == history.Put && !op.Succeeded() && !observed[[2]string{op.Key, op.Value}]:
			left.Unobserved++
			continue
		}
		in, out := input{kind: op.Kind, key: op.Key}, output{failed: !op.Succeeded(), found: op.Found}
		if op.Kind == history.Put {
			in.value = op.Value
		} else {
			out.value = op.Value
		}
		ret := op.Return
		if !op.Succeeded() {
			ret = Infinity
		}
		ops = append(ops, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Call, Output: out, Return: ret})
	}
	return ops, left
}
