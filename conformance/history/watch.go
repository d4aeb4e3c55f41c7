package history

// WatchRecord is one thing a watcher did or was told, in the order it
// happened: a stream (re)started (Start) or a response arrived (Response).
// Exactly one of the two is set. In a history file each is a line of its
// own, {"watch": {...}}, beside the operations' lines.
type WatchRecord struct {
	// Watcher numbers the watchers of a run from 0.
	Watcher int `json:"watcher"`
	// At is nanoseconds since the recorder started, as Operation.Call.
	At       int64          `json:"at"`
	Start    *WatchStart    `json:"start,omitempty"`
	Response *WatchResponse `json:"response,omitempty"`
}

// WatchStart is a watch request: the watcher opened a stream from
// Revision on every key under Prefix.
type WatchStart struct {
	Prefix string `json:"prefix"`
	// Revision is the revision asked (clientv3.WithRev): the stream owes
	// every event from it on.
	Revision int64 `json:"revision"`
	// Resume marks a stream that continues the watcher's previous one from
	// the revision after the last event it got, as an informer does after
	// its watch ends: one logical stream, whose guarantees hold across the
	// resume. A start that is not a resume begins a new logical stream.
	Resume bool `json:"resume,omitempty"`
}

// WatchResponse is one response on a stream, as clientv3 delivered it.
type WatchResponse struct {
	// Revision is the response header's: the member's revision when it
	// sent the response. Only a progress notification promises that every
	// event up to it was delivered.
	Revision int64        `json:"revision"`
	Events   []WatchEvent `json:"events,omitempty"`
	// Progress marks a progress notification: no event, and every event up
	// to Revision was delivered.
	Progress bool `json:"progress,omitempty"`
	// Canceled marks the stream's end by the server (or the client library
	// giving up on it), with Error saying why.
	Canceled bool `json:"canceled,omitempty"`
	// CompactRevision is set when the stream was cancelled because the
	// revision it needed next was compacted (ErrCompacted): the events
	// before CompactRevision can no longer be delivered.
	CompactRevision int64  `json:"compactRevision,omitempty"`
	Error           string `json:"error,omitempty"`
}

// EventType is what an event did to its key.
type EventType string

const (
	// EventPut created or updated the key.
	EventPut EventType = "put"
	// EventDelete removed the key.
	EventDelete EventType = "delete"
)

// WatchEvent is one change a stream delivered.
type WatchEvent struct {
	Type           EventType `json:"type"`
	Key            string    `json:"key"`
	Value          string    `json:"value,omitempty"`
	ModRevision    int64     `json:"modRevision"`
	CreateRevision int64     `json:"createRevision,omitempty"`
}
