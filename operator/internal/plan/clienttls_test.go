package plan

import (
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// TestNoClientTLSChangesNothing: without a client certificate for members
// that require one, no member answers; that must not read as members lost
// (no bootstrap of a cluster whose pods run, no replacement, no failure).
// The plan waits and says why, whatever else it sees; a paused cluster
// stays paused.
func TestNoClientTLSChangesNothing(t *testing.T) {
	const why = `reading spec.TLS.static.operatorSecret "etcd-client-tls": not found`
	unknown := func(o *Observed) { o.MembershipKnown, o.Members, o.LeaderID = false, nil, 0 }
	for name, o := range map[string]Observed{
		"new cluster":      with(cluster("3.5.21"), func(o *Observed) { o.Size, o.Phase = 3, "" }),
		"running, unknown": with(cluster("3.5.21", "a", "b", "c"), unknown),
		"pods gone":        with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { unknown(o); dropPod(o, "a"); dropPod(o, "b") }),
		"scale up":         with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { unknown(o); o.Size = 5 }),
	} {
		o.NoClientTLS = why
		a := Next(o, Options{})
		if a.Kind != Wait || a.Reason != conditions.ReasonClientTLSUnavailable || a.Message != why || a.RequeueAfter != PollClientTLS {
			t.Errorf("%s: %+v, want a Wait (%s) that says why and looks again in %s", name, a, conditions.ReasonClientTLSUnavailable, PollClientTLS)
		}
		o.Paused = true
		if a := Next(o, Options{}); a.Reason != conditions.ReasonPaused {
			t.Errorf("%s, paused: %+v, want paused", name, a)
		}
	}
}
