package model

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/history/historytest"
)

// Failed puts that no read observed, during concurrent traffic, as when
// puts hit a member during an election: every one returns at Infinity, so
// each is concurrent with all that follows and porcupine has to consider
// which of them to apply before every later operation. It cannot finish;
// with them left out (see Operations) it decides at once, and the verdict
// is the same.
func TestUnobservedFailedPutsAreLeftOut(t *testing.T) {
	h := historytest.Register("k", 4, 200, 7)
	h.Operations = append(h.Operations, historytest.FailedPuts("k", 200, 100, history.Indeterminate)...)

	if res := porcupine.CheckOperationsTimeout(KV, allOperations(h), time.Second); res != porcupine.Unknown {
		t.Errorf("porcupine decided %v with every failed put in: the reproduction no longer reproduces", res)
	}
	ops, left := Operations(h)
	if left != (Left{Unobserved: 200}) || len(ops) != len(h.Operations)-200 {
		t.Fatalf("left out %+v, kept %d of %d; want exactly the 200 failed puts left out", left, len(ops), len(h.Operations))
	}
	if res := porcupine.CheckOperationsTimeout(KV, ops, 5*time.Second); res != porcupine.Ok {
		t.Fatalf("with the failed puts left out: %v, want Ok", res)
	}
}

// allOperations is Operations without leaving any failed put out.
func allOperations(h history.History) []porcupine.Operation {
	var ops []porcupine.Operation
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

// A failed put whose value a read saw stays in as maybe-applied; a
// definite failure is left out whatever was read, so a read of it is a
// violation.
func TestOperationsKeepsObservedIndeterminatePuts(t *testing.T) {
	h := history.History{Operations: []history.Operation{
		{Client: 0, Kind: history.Put, Key: "k", Value: "seen", Call: 0, Return: 5, Error: "timeout"},
		{Client: 1, Kind: history.Put, Key: "k", Value: "refused", Call: 0, Return: 5, Error: "etcdserver: too many requests", ErrorClass: history.Definite},
		{Client: 2, Kind: history.Put, Key: "other", Value: "seen", Call: 0, Return: 5, Error: "timeout"},
		{Client: 3, Kind: history.Get, Key: "k", Value: "seen", Found: true, Call: 10, Return: 15},
		{Client: 3, Kind: history.Get, Key: "k", Call: 20, Return: 25, Error: "timeout"},
	}}
	ops, left := Operations(h)
	if left != (Left{Definite: 1, Unobserved: 1}) || len(ops) != 2 {
		t.Fatalf("left out %+v, kept %d; want the definite put and the put to the other key left out", left, len(ops))
	}
	if ops[0].Return != Infinity {
		t.Errorf("the observed failed put returns at %d, want Infinity", ops[0].Return)
	}
	if res := porcupine.CheckOperations(KV, ops); !res {
		t.Error("an observed maybe-applied put is not linearizable")
	}
	h.Operations[3].Value = "refused"
	ops, _ = Operations(h)
	if porcupine.CheckOperations(KV, ops) {
		t.Error("a read of a put that failed definitely is linearizable")
	}
}
