// Package history is the record of client operations taken at the client
// boundary: one request in flight per client, monotonic invoke/return times.
// It is the only thing traffic produces and the only thing validation reads.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Kind is the type of a client operation.
type Kind string

const (
	// Put writes a unique value to a key.
	Put Kind = "put"
	// Get reads a key with a linearizable read.
	Get Kind = "get"
)

// Operation is one completed client request.
type Operation struct {
	Client int    `json:"client"`
	Kind   Kind   `json:"kind"`
	Key    string `json:"key"`
	// Value is the value written (put) or read (get; empty when not found).
	Value string `json:"value,omitempty"`
	// Found is set for a get that returned the key.
	Found bool `json:"found,omitempty"`
	// Call and Return are nanoseconds since the recorder started.
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	// Error is empty when the request succeeded. A failed put may still
	// have taken effect.
	Error string `json:"error,omitempty"`
	// Final marks the reads done after traffic stopped, to find lost writes.
	Final bool `json:"final,omitempty"`
}

// Succeeded reports whether the client saw success.
func (o Operation) Succeeded() bool { return o.Error == "" }

// History is every operation of a run, in the order they completed.
type History struct {
	Operations []Operation `json:"operations"`
}

// Read parses a history written as JSON lines, one Operation per line.
func Read(r io.Reader) (History, error) {
	var h History
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	for n := 1; ; n++ {
		var op Operation
		err := dec.Decode(&op)
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return History{}, fmt.Errorf("history record %d: %w", n, err)
		}
		h.Operations = append(h.Operations, op)
	}
}

// ReadFile reads a history file.
func ReadFile(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return History{}, err
	}
	defer func() { _ = f.Close() }()
	h, err := Read(f)
	if err != nil {
		return History{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// WriteFile writes a history as JSON lines so it can be re-validated.
func WriteFile(path string, h History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, op := range h.Operations {
		if err := enc.Encode(op); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
