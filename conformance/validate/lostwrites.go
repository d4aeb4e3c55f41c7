package validate

import (
	"sort"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/model"
)

// LostWrite is an acknowledged put whose value the final read cannot
// explain.
type LostWrite struct {
	Key        string `json:"key"`
	Value      string `json:"value"`
	FinalValue string `json:"finalValue"`
}

// LostWrites compares each key's final read with the acknowledged puts.
// A put W is lost when the final value was written by a put P that ended
// (or, if it failed, could have ended) before W began: P must precede W, so
// W's value or a later one should be visible.
func LostWrites(h history.History) []LostWrite {
	puts := map[string]history.Operation{} // by value; values are unique
	acked := map[string][]history.Operation{}
	for _, op := range h.Operations {
		if op.Kind != history.Put {
			continue
		}
		puts[op.Value] = op
		if op.Succeeded() {
			acked[op.Key] = append(acked[op.Key], op)
		}
	}
	var lost []LostWrite
	for _, final := range h.Operations {
		if !final.Final || !final.Succeeded() || final.Kind != history.Get {
			continue
		}
		writer, known := puts[final.Value]
		writerEnd := writer.Return
		if known && !writer.Succeeded() {
			writerEnd = model.Infinity
		}
		for _, w := range acked[final.Key] {
			switch {
			case !final.Found, !known:
				lost = append(lost, LostWrite{Key: w.Key, Value: w.Value, FinalValue: final.Value})
			case w.Value != writer.Value && writerEnd < w.Call:
				lost = append(lost, LostWrite{Key: w.Key, Value: w.Value, FinalValue: final.Value})
			}
		}
	}
	return lost
}

// Unverified returns, sorted, the keys with an acknowledged put but no
// successful final read. Lost writes are looked for in the final reads, so
// on these keys they cannot be ruled out.
func Unverified(h history.History) []string {
	written, read := map[string]bool{}, map[string]bool{}
	for _, op := range h.Operations {
		switch {
		case op.Kind == history.Put && op.Succeeded():
			written[op.Key] = true
		case op.Kind == history.Get && op.Final && op.Succeeded():
			read[op.Key] = true
		}
	}
	var keys []string
	for k := range written {
		if !read[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
