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

// Operations converts a history into porcupine operations. Failed gets
// are dropped (they observed nothing); failed puts return at Infinity.
func Operations(h history.History) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Operations))
	for _, op := range h.Operations {
		if op.Kind == history.Get && !op.Succeeded() {
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
	return ops
}
