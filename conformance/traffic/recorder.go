package traffic

import (
	"sync"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Recorder collects operations and watch records with times relative to
// its creation. Go's time.Since uses the monotonic clock, so times never go
// backwards.
type Recorder struct {
	start   time.Time
	mu      sync.Mutex
	ops     []history.Operation
	watches []history.WatchRecord
	puts    int
	// lastPut is the highest revision an acknowledged put created.
	lastPut int64
}

// NewRecorder starts the clock.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }

// Started is the wall-clock time of the recorder's zero.
func (r *Recorder) Started() time.Time { return r.start.Round(0) }

func (r *Recorder) add(op history.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	if op.Kind == history.Put && op.Succeeded() {
		r.puts++
		r.lastPut = max(r.lastPut, op.Revision)
	}
}

func (r *Recorder) addWatch(rec history.WatchRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.At = r.now()
	r.watches = append(r.watches, rec)
}

// lastPutRevision is the highest revision an acknowledged put created so
// far (0: none).
func (r *Recorder) lastPutRevision() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastPut
}

// SuccessfulPuts counts acknowledged writes so far.
func (r *Recorder) SuccessfulPuts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.puts
}

// Len is the number of recorded operations.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// History returns a copy of what was recorded.
func (r *Recorder) History() history.History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return history.History{
		Operations: append([]history.Operation(nil), r.ops...),
		Watches:    append([]history.WatchRecord(nil), r.watches...),
	}
}
