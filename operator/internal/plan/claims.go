package plan

import (
	"fmt"
	"maps"
	"slices"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// orphanClaims deletes a member claim that belongs to no member of etcd's
// membership and to no pod: what a removal leaves behind when the operator
// stops between removing the member and deleting its claim. The data on it
// is of no use (a removed member can never rejoin), and kept it would be
// brought back as a member by a later restart on volumes after quorum loss.
// A claim younger than OrphanGrace is left alone: the membership just read
// may lag behind the member add that the claim was made for.
func orphanClaims(o Observed, opts Options, _ string) (Action, bool) {
	if !o.UsesPVC {
		return Action{}, false
	}
	for _, name := range slices.Sorted(maps.Keys(o.PVCs)) {
		if _, hasPod := o.pod(name); hasPod || o.isMember(name) || (o.UnownedPVCs[name] && !opts.BootstrapBesideClaims) {
			continue
		}
		if created, ok := o.PVCCreated[name]; !ok || o.Now.Sub(created) < OrphanGrace {
			continue
		}
		return Action{Kind: DeleteOrphanClaim, Member: name, Reason: conditions.ReasonScalingDown,
			Message: fmt.Sprintf("claim %s belongs to no member and no pod: deleting it", name), RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}
