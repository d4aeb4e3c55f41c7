package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
)

// errNowServable ends the operator so that it starts again and serves a kind
// it could not serve when it started.
var errNowServable = errors.New("can be served now (its CRD was installed, or the grant widened, after the operator started): " +
	"stopping so that the operator starts again and serves it")

// defaultServableCheck is how often a kind not served at start is asked after.
const defaultServableCheck = 30 * time.Second

// servableLater asks, every interval, whether a kind the operator did not
// serve at start could be served now, and ends the manager with
// errNowServable when one can: what is served is decided once at start
// (controllers and their watches are wired then), so the process exits and
// the kubelet starts it again. An install that applies the operator before
// the EtcdBackup and EtcdRestore CRDs (coreos' walkthroughs add them later)
// would otherwise leave backups unserved until someone restarted it.
type servableLater struct {
	access *kubecompat.Access
	// namespace whose objects are served, "" for all.
	namespace string
	resources []string
	interval  time.Duration
}

// Start implements manager.Runnable.
func (s servableLater) Start(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, r := range s.resources {
			why, err := whyNotServed(ctx, s.access, s.namespace, r)
			if err == nil && why == "" {
				return fmt.Errorf("%s %w", r, errNowServable)
			}
			// An error is asked again at the next tick: discovery may fail
			// for a moment while the API server aggregates a new CRD.
		}
	}
}

// notServed lists the resources g does not serve.
func (g grant) notServed() []string {
	var out []string
	if g.noBackups != "" {
		out = append(out, "etcdbackups")
	}
	if g.noRestores != "" {
		out = append(out, "etcdrestores")
	}
	return out
}
