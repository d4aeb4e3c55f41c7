package plan

import (
	"fmt"
	"maps"
	"slices"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func withoutMembership(o Observed, version string) Action {
	if len(o.Pods) == 0 && (o.Phase == etcdv1beta2.PhaseNone || o.Phase == etcdv1beta2.PhaseCreating) {
		return Action{Kind: Bootstrap, Count: o.Size, Version: version, Reason: conditions.ReasonBootstrapping,
			Message: fmt.Sprintf("creating %d members", o.Size), RequeueAfter: PollInFlight}
	}
	if a, ok := resumeBootstrap(o); ok {
		return a
	}
	if o.UsesPVC {
		// Members whose pods are gone but whose data survives come back on their claims;
		// with quorum lost that is the only way back.
		for _, name := range slices.Sorted(maps.Keys(o.PVCs)) {
			if _, ok := o.pod(name); !ok {
				return Action{Kind: RecreatePod, Member: name, Version: version, Reason: conditions.ReasonRestartingMember,
					Message: fmt.Sprintf("restarting member %s on its volume", name), RequeueAfter: AfterChange}
			}
		}
	}
	if MembersLost(o) {
		return afterMembersLost(o)
	}
	return wait(conditions.ReasonMembershipUnknown, "waiting for a member to answer", PollInFlight)
}

// resumeBootstrap finishes a bootstrap that stopped halfway (the operator
// restarted between creating pods). Only while the cluster has never run: a
// bootstrap pod created later would start a second, empty cluster.
func resumeBootstrap(o Observed) (Action, bool) {
	if o.Phase != etcdv1beta2.PhaseNone && o.Phase != etcdv1beta2.PhaseCreating {
		return Action{}, false
	}
	for _, p := range o.Pods {
		for _, peer := range p.BootstrapPeers {
			if _, ok := o.pod(peer); !ok {
				return Action{Kind: ResumeBootstrap, Member: peer, From: p.Name, Reason: conditions.ReasonBootstrapping,
					Message: fmt.Sprintf("creating bootstrap member %s, which is missing", peer), RequeueAfter: AfterChange}, true
			}
		}
	}
	return Action{}, false
}
