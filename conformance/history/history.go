// Package history is the record of client operations taken at the client
// boundary: one request in flight per client, monotonic invoke/return times.
// It is the only thing traffic produces and the only thing validation reads.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
	// have taken effect, unless ErrorClass says it definitely did not.
	Error string `json:"error,omitempty"`
	// ErrorClass is what the error proves about a failed request; see
	// Class.
	ErrorClass ErrorClass `json:"errorClass,omitempty"`
	// Retry marks the one retry of the same client's previous request,
	// which failed definitely.
	Retry bool `json:"retry,omitempty"`
	// Final marks the reads done after traffic stopped, to find lost writes.
	Final bool `json:"final,omitempty"`
	// Term is the raft term in the header of a successful response: the
	// term of the member that answered. Leader changes show in the
	// history as the first answer with a higher term.
	Term uint64 `json:"term,omitempty"`
	// Revision is the revision a successful put created (its response
	// header's): where the put's event must appear in a watch stream.
	Revision int64 `json:"revision,omitempty"`
}

// ErrorClass sorts failed requests by what the client can know about
// their effect.
type ErrorClass string

const (
	// Definite: the request cannot have taken effect. It never left the
	// client, or etcd rejected it before proposing it to raft.
	Definite ErrorClass = "definite"
	// Indeterminate: the request may or may not have taken effect
	// (timeouts, a connection lost after the request was sent, errors the
	// client does not know).
	Indeterminate ErrorClass = "indeterminate"
)

// Succeeded reports whether the client saw success.
func (o Operation) Succeeded() bool { return o.Error == "" }

// Class is the error class of a failed operation ("" for a success). A
// failure recorded without a class, as in older histories, is
// indeterminate: the cautious reading.
func (o Operation) Class() ErrorClass {
	switch {
	case o.Succeeded():
		return ""
	case o.ErrorClass == Definite:
		return Definite
	default:
		return Indeterminate
	}
}

// History is every operation of a run, in the order they completed, and
// what its watchers saw, in the order each watcher saw it.
type History struct {
	Operations []Operation `json:"operations"`
	// Watches is empty in histories recorded without watchers, and in
	// every history from before watchers were recorded.
	Watches []WatchRecord `json:"watches,omitempty"`
}

// Read parses a history written as JSON lines: one Operation per line,
// and one {"watch": WatchRecord} per line for what watchers saw.
func Read(r io.Reader) (History, error) {
	var h History
	dec := json.NewDecoder(r)
	for n := 1; ; n++ {
		var line json.RawMessage
		err := dec.Decode(&line)
		if err == io.EOF {
			return h, nil
		}
		if err == nil {
			err = h.add(line)
		}
		if err != nil {
			return History{}, fmt.Errorf("history record %d: %w", n, err)
		}
	}
}

// watchLine is how a watch record sits in a history file: under a key no
// operation has, so the operations' lines stay as they always were.
type watchLine struct {
	Watch *WatchRecord `json:"watch"`
}

// add decodes one line, strictly: a field the format does not know is an
// error, not something silently dropped.
func (h *History) add(line json.RawMessage) error {
	var probe struct {
		Watch json.RawMessage `json:"watch"`
	}
	// Only a line that names "watch" needs the probe: a history has about
	// as many operation lines as watch lines, and decoding each once more
	// would double the time a long history takes to load.
	if bytes.Contains(line, []byte(`"watch"`)) {
		if err := json.Unmarshal(line, &probe); err != nil {
			return err
		}
	}
	if probe.Watch == nil {
		var op Operation
		if err := strictUnmarshal(line, &op); err != nil {
			return err
		}
		h.Operations = append(h.Operations, op)
		return nil
	}
	var w watchLine
	if err := strictUnmarshal(line, &w); err != nil {
		return err
	}
	if w.Watch == nil {
		return errors.New("watch record is null")
	}
	if (w.Watch.Start == nil) == (w.Watch.Response == nil) {
		return fmt.Errorf("watch record of watcher %d at %d: want exactly one of start and response", w.Watch.Watcher, w.Watch.At)
	}
	h.Watches = append(h.Watches, *w.Watch)
	return nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
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

// Write writes a history as JSON lines, the operations first, so it can
// be re-validated.
func Write(w io.Writer, h History) error {
	enc := json.NewEncoder(w)
	for _, op := range h.Operations {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	for _, rec := range h.Watches {
		if err := enc.Encode(watchLine{Watch: &rec}); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes a history file (see Write).
func WriteFile(path string, h History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := Write(w, h); err != nil {
		_ = f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
