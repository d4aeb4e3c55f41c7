package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// withoutMembership decides while no member answers. A cluster is
// bootstrapped only where nothing of an earlier one is left: no pod, and no
// claim with its labels but its own (those of a bootstrap of its own that
// stopped before its pods were made: their members never ran, and the
// claims of no member go once OrphanGrace is over). Claims left by an
// EtcdCluster of the same name (deleted with --cascade=orphan, its pods gone
// since) hold that cluster's data: their members are started again on them,
// and a spec that asks for no claims waits for a person instead of starting
// an empty cluster beside them.
func withoutMembership(o Observed, opts Options, version string) Action {
	if len(o.Pods) == 0 && (o.Phase == etcdv1beta2.PhaseNone || o.Phase == etcdv1beta2.PhaseCreating) {
		switch {
		case len(o.UnownedPVCs) == 0 || opts.BootstrapBesideClaims:
			return Action{Kind: Bootstrap, Count: o.Size, Version: version, Reason: conditions.ReasonBootstrapping,
				Message: fmt.Sprintf("creating %d members", o.Size), RequeueAfter: PollInFlight}
		case !o.UsesPVC:
			return wait(conditions.ReasonClaimsWithoutClaimSpec, fmt.Sprintf(
				"claims with this cluster's labels exist (%s), which may hold an earlier cluster's data, but spec.pod.persistentVolumeClaimSpec is not set: no new cluster is created beside them; set it to start their members again, or delete the claims to start an empty cluster",
				strings.Join(slices.Sorted(maps.Keys(o.UnownedPVCs)), ", ")), PollSteady)
		}
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
	if claimsWithoutClaimSpec(o) {
		return wait(conditions.ReasonClaimsWithoutClaimSpec, fmt.Sprintf(
			"every member pod is gone and spec.pod.persistentVolumeClaimSpec is not set, but the members' claims (%s) hold their data: nothing is started; set the claim spec back to restart the members on their claims",
			strings.Join(slices.Sorted(maps.Keys(o.PVCs)), ", ")), PollSteady)
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
