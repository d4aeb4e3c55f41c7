package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// Server runs traffic from the moment it is created and serves:
//
//	GET  /status  {"operations":N,"successfulPuts":N,"done":bool,"startedAt":time}
//	POST /stop    stops the clients, does the final reads, lets the
//	              watchers catch up and returns the history as JSON lines.
//
// The history is fetched over HTTP rather than read from the pod log so a
// long run is not cut by log rotation.
type Server struct {
	rec    *Recorder
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	once   sync.Once
}

// Start begins traffic in the background.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{rec: NewRecorder(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = Run(ctx, cfg, s.rec)
	}()
	return s, nil
}

// Stop ends the traffic and waits for the final reads.
func (s *Server) Stop() error {
	s.once.Do(s.cancel)
	<-s.done
	return s.err
}

// Recorder exposes the live recorder.
func (s *Server) Recorder() *Recorder { return s.rec }

// Handler is the HTTP control surface.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		done := false
		select {
		case <-s.done:
			done = true
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Status{Operations: s.rec.Len(), SuccessfulPuts: s.rec.SuccessfulPuts(), Done: done, StartedAt: s.rec.Started()})
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Stop(); err != nil {
			http.Error(w, fmt.Sprintf("traffic failed: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		_ = history.Write(w, s.rec.History())
	})
	return mux
}

// Status is the body of GET /status.
type Status struct {
	Operations     int  `json:"operations"`
	SuccessfulPuts int  `json:"successfulPuts"`
	Done           bool `json:"done"`
	// StartedAt is the history's zero on the wall clock: the suite places
	// what the cluster did during the phase on the history's time axis.
	StartedAt time.Time `json:"startedAt"`
}
