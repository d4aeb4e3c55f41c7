package controller

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// changeFailures remembers, per cluster, the changes that failed in a row
// (plan.Failure), for the plan's backoff and the Stalled condition. In
// memory only: an operator that restarts tries every change at once again.
// A new generation of the cluster (its spec changed) starts afresh: the
// change that failed may be one the new spec no longer asks for, or one
// it fixed.
type changeFailures struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*clusterFailures
}

type clusterFailures struct {
	generation int64
	failures   []plan.Failure
}

// list returns the failures of cluster key at generation.
func (f *changeFailures) list(key types.NamespacedName, generation int64) []plan.Failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	cf := f.m[key]
	if cf == nil || cf.generation != generation {
		delete(f.m, key)
		return nil
	}
	return append([]plan.Failure(nil), cf.failures...)
}

func (f *changeFailures) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// fail records one more failure of change (kind, member); it returns how
// many in a row.
func (f *changeFailures) fail(key types.NamespacedName, generation int64, kind plan.Kind, member string, err error, now time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.NamespacedName]*clusterFailures{}
	}
	cf := f.m[key]
	if cf == nil || cf.generation != generation {
		cf = &clusterFailures{generation: generation}
		f.m[key] = cf
	}
	var refused *memberPodRefused
	for i := range cf.failures {
		if p := &cf.failures[i]; p.Kind == kind && p.Member == member {
			p.Count, p.Last, p.Error, p.Refused = p.Count+1, now, err.Error(), errors.As(err, &refused)
			return p.Count
		}
	}
	cf.failures = append(cf.failures, plan.Failure{Kind: kind, Member: member, Count: 1, Last: now, Error: err.Error(),
		Refused: errors.As(err, &refused)})
	return 1
}

// succeed forgets the failures of change (kind, member); onlyRefusal
// forgets them only if the last was a refusal of the member's pod.
func (f *changeFailures) succeed(key types.NamespacedName, kind plan.Kind, member string, onlyRefusal bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cf := f.m[key]
	if cf == nil {
		return
	}
	kept := cf.failures[:0]
	for _, p := range cf.failures {
		if p.Kind != kind || p.Member != member || (onlyRefusal && !p.Refused) {
			kept = append(kept, p)
		}
	}
	cf.failures = kept
}

// note records the outcome of this pass's action a (err from act) and
// returns the delay before the next pass when it failed. How an outcome
// counts:
//   - a failed change counts against itself (a refused member pod too),
//     unless etcd refused it for a moment only;
//   - an added member is a success only once it is promoted: a learner
//     removed as dead though it had a pod (it never joined, or its pod
//     never ran) counts against adding a member, so the next add waits;
//   - a cluster with nothing to do has nothing failing.
func (r *Reconciler) note(key types.NamespacedName, generation int64, obs *observation, a plan.Action, err error) time.Duration {
	now := r.now()
	switch {
	case etcdadmin.IsMomentary(err):
		// etcd refuses membership changes for a few seconds after any
		// member (re)connects, or while leadership moves: retried at the
		// in-flight pace, not counted (nothing is stalled).
		return plan.PollInFlight
	case err != nil:
		return plan.Backoff(r.failures.fail(key, generation, a.Kind, a.Member, err, now))
	case a.Kind == plan.Nothing:
		r.failures.forget(key)
	case a.Kind == plan.AddMember:
		// The pod was accepted: a refusal is over; the add succeeds once promoted.
		r.failures.succeed(key, plan.AddMember, "", true)
	case a.Kind == plan.PromoteLearner:
		r.failures.succeed(key, plan.PromoteLearner, a.Member, false)
		r.failures.succeed(key, plan.AddMember, "", false)
	case a.Kind == plan.RemoveDeadMember || a.Kind == plan.RemoveMember:
		r.failures.succeed(key, a.Kind, a.Member, false)
		if why, ok := learnerThatDidNotJoin(obs, a); ok {
			r.failures.fail(key, generation, plan.AddMember, "", errors.New(why), now)
		}
	case changes(a.Kind):
		r.failures.succeed(key, a.Kind, a.Member, false)
	}
	return 0
}

// learnerThatDidNotJoin: action a removed a learner that had a pod, and why
// it was dead. A learner with no pod is one whose add already failed (its
// pod was refused), or that an operator stopped halfway: not counted again.
func learnerThatDidNotJoin(obs *observation, a plan.Action) (string, bool) {
	if _, hasPod := obs.pods[a.Member]; !hasPod {
		return "", false
	}
	for _, m := range obs.Members {
		if m.ID == a.MemberID && m.IsLearner {
			why := plan.WhyDead(obs.Observed, m)
			if why == "" {
				return "", false // a learner removed for a scale down, not dead
			}
			return fmt.Sprintf("the new member %s did not join and was removed: %s", a.Member, why), true
		}
	}
	return "", false
}
