package report

import (
	"slices"
	"time"
)

// Event is one thing the cluster or the operator did while a check ran, as
// the suite saw it: what people need next to the clients' timeline to
// tell what the operator was doing when the clients suffered.
type Event struct {
	// Time is when the suite saw it, on the host's clock (the traffic
	// pods' clock on kind, which shares the host's kernel).
	Time   time.Time   `json:"time"`
	Source EventSource `json:"source"`
	// Object is what it happened to, named as kubectl names it:
	// "pod/<name>", a Kubernetes Event's involved object
	// ("etcdcluster/<name>").
	Object string `json:"object"`
	// Reason is what happened, in a word: a pod's Created, Ready,
	// Restarted, Deleted...; a Kubernetes Event's reason.
	Reason  string     `json:"reason"`
	Message string     `json:"message,omitempty"`
	Level   EventLevel `json:"level"`
}

// EventSource says where an event was seen.
type EventSource string

const (
	// SourcePod: the lifecycle of a member pod of the check's cluster,
	// from a watch.
	SourcePod EventSource = "pod"
	// SourceEvent: a Kubernetes Event (core/v1) of the check's namespace.
	SourceEvent EventSource = "event"
	// SourceOperator: the lifecycle of a pod of the operator's Deployment.
	SourceOperator EventSource = "operator"
	// SourceEtcd: a change of etcd's member list or leader, seen by the
	// ground-truth probes when the suite polled them (not when it
	// happened).
	SourceEtcd EventSource = "etcd"
	// SourceSuite: the suite's own work, where it costs time inside a
	// timed figure (a slow ground-truth probe).
	SourceSuite EventSource = "suite"
)

// EventLevel sorts events as Kubernetes does: Normal or Warning.
type EventLevel string

const (
	LevelNormal  EventLevel = "normal"
	LevelWarning EventLevel = "warning"
)

// MaxEventsPerCheck bounds the events kept for one check, so that a pod
// crash-looping for the length of a check cannot swell report.json; the
// first ones are kept (they show how the trouble began) and the rest
// counted in Check.EventsDropped.
const MaxEventsPerCheck = 2000

// Event records what the cluster did during a check, keeping the check's
// events in time order: they come from several watches whose deliveries
// interleave.
func (r *Recorder) Event(check string, ev Event) {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(c.Events) >= MaxEventsPerCheck {
		c.EventsDropped++
		return
	}
	// After every event of the same time: equal times keep their order.
	i, _ := slices.BinarySearchFunc(c.Events, ev.Time, func(e Event, t time.Time) int {
		if e.Time.After(t) {
			return 1
		}
		return -1
	})
	c.Events = slices.Insert(c.Events, i, ev)
}

// Events is a copy of a check's events so far, safe to read while they
// are being recorded.
func (r *Recorder) Events(check string) []Event {
	c := r.Check(check)
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(c.Events)
}
