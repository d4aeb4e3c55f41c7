package plan

import (
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// Timing of the plan's waits. Short because etcd changes produce no
// Kubernetes events: the only way to see them soon is to look again soon.
const (
	// PollInFlight is how soon to look again while a step is in progress.
	PollInFlight = time.Second
	// PollSteady is how soon to look again when all is well (pod events wake us sooner).
	PollSteady = 30 * time.Second
	// AfterChange is how soon to look again after a membership change.
	AfterChange = 200 * time.Millisecond
	// PollClientTLS is how soon to look again for an operatorSecret that
	// could not be read: no event tells when it appears (Secrets are not
	// watched, see Observed.NoClientTLS).
	PollClientTLS = 5 * time.Second
	// PollNoSpace is how soon to look again while NOSPACE is active: the
	// cluster refuses writes, and what ends it (a compaction, deletes)
	// produces no Kubernetes event.
	PollNoSpace = 10 * time.Second
	// OrphanGrace protects a just-created pod from being taken for an orphan
	// by a member list that lags behind the member add.
	OrphanGrace = 15 * time.Second
)

func (o Observed) isMember(name string) bool {
	for _, m := range o.Members {
		if m.Name == name {
			return true
		}
	}
	return false
}

func (o Observed) pod(name string) (Pod, bool) {
	for _, p := range o.Pods {
		if p.Name == name {
			return p, true
		}
	}
	return Pod{}, false
}

func wait(reason, msg string, after time.Duration) Action {
	return Action{Kind: Wait, Reason: reason, Message: msg, RequeueAfter: after}
}

// Next returns the one next safe action. Checks run in order of urgency and
// the first that applies wins: recover, then finish a membership change, then
// scale, then upgrade. When a member will pass a deadline before the next
// look, the next look is at the deadline. A pod recreated on its claim gets
// its version from recreating. A change that failed lately waits for its
// next try (backoff).
func Next(o Observed, opts Options) Action {
	a := backoff(o, recreating(o, next(o, opts)))
	if o.NoSpace && (a.RequeueAfter == 0 || a.RequeueAfter > PollNoSpace) && !o.Paused {
		a.RequeueAfter = PollNoSpace
	}
	if a.RequeueAfter > 0 && o.MembershipKnown {
		if left, ok := untilDeadline(o); ok && left < a.RequeueAfter {
			a.RequeueAfter = left
		}
	}
	return a
}

func next(o Observed, opts Options) Action {
	if o.Paused {
		return Action{Kind: Nothing, Reason: conditions.ReasonPaused, Message: "spec.paused is true: no changes are made"}
	}
	if o.NoClientTLS != "" {
		// Without a client certificate no member answers, which must not be
		// taken for lost members: nothing is created, removed or deleted.
		return wait(conditions.ReasonClientTLSUnavailable, o.NoClientTLS, PollClientTLS)
	}
	if a, ok := cacheBehind(o); ok {
		return a
	}
	if a, ok := strangers(o); ok {
		return a
	}
	version, _ := EffectiveVersion(o)
	if a, ok := restore(o, opts, version); ok {
		return a
	}
	if a, ok := restartHeld(o, version); ok {
		return a
	}
	if a, ok := unsafeRebootstrap(o, opts, version); ok {
		return a
	}
	if a, ok := recoverFromSurvivor(o, version); ok {
		return a
	}
	if !o.MembershipKnown {
		return withoutMembership(o, opts, version)
	}
	for _, step := range []func(Observed, Options, string) (Action, bool){
		orphanPods, orphanClaims, deadMembers, learners, healthGate, reclaimSpace, scale, upgrade, defragment,
	} {
		if a, ok := step(o, opts, version); ok {
			return a
		}
	}
	return Action{Kind: Nothing, Reason: conditions.ReasonAtDesiredSize, RequeueAfter: PollSteady}
}
