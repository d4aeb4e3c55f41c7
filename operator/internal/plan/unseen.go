package plan

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// PodCacheGrace is how long a member pod the operator created may be
// missing from the pod list (the operator's cache, fed by a watch) before
// the plan decides as if it did not exist. A watch delivers a create within
// milliseconds, and a loaded API server's watch cache within a second or
// two; 15 seconds, as OrphanGrace for the converse lag (a member list that
// does not show a new member yet).
const PodCacheGrace = 15 * time.Second

// unseen: member name's pod was created by this operator less than
// PodCacheGrace ago and the pod list does not show it yet.
func (o Observed) unseen(name string) bool {
	created, ok := o.Unseen[name]
	return ok && o.Now.Sub(created) < PodCacheGrace
}

// cacheBehind waits while a pod the operator created is not in the pod
// list yet: deciding on a picture without it would take its member for
// one whose pod is gone (removed, and added again: churn), or a
// bootstrap's pods for none at all. The informer catches up within
// PodCacheGrace, and a pod create wakes the next pass anyway.
func cacheBehind(o Observed) (Action, bool) {
	for _, name := range slices.Sorted(maps.Keys(o.Unseen)) {
		if !o.unseen(name) {
			continue
		}
		left := PodCacheGrace - o.Now.Sub(o.Unseen[name])
		return wait(conditions.ReasonPodNotSeenYet, fmt.Sprintf(
			"pod %s was created at %s and the operator's cache does not show it yet", name, o.Unseen[name].UTC().Format(time.RFC3339)),
			min(PollInFlight, left)), true
	}
	return Action{}, false
}
