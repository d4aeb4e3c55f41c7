package plan

import (
	"fmt"
	"slices"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// unsafeRebootstrap is the known-bad answer to quorum loss that the
// conformance self-test proves the quorum-loss check catches: once most of
// a running cluster's member pods are gone or not ready, it throws away the
// rest, claims included, and bootstraps a new, empty cluster under the same
// name. Clients see the cluster serve again, without the writes it had
// acknowledged. Ready, not only present: pods deleted one after another
// (as the check and kubectl do) let the operator recreate the first on its
// claim before it sees the second gone, and a count of pods present would
// then never see the majority lost.
func unsafeRebootstrap(o Observed, opts Options, version string) (Action, bool) {
	if !opts.RebootstrapAfterQuorumLoss || o.Phase != etcdv1beta2.PhaseRunning {
		return Action{}, false
	}
	var names []string
	live := 0
	for _, p := range o.Pods {
		names = append(names, p.Name)
		if p.Ready && !p.Terminating && !p.Failed {
			live++
		}
	}
	if live >= o.Size/2+1 {
		return Action{}, false
	}
	for name := range o.PVCs {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return Action{Kind: Rebootstrap, Count: o.Size, Version: version, Names: names, Reason: conditions.ReasonBootstrapping,
		Message:      fmt.Sprintf("%d of %d member pods left: deleting %v with their claims and bootstrapping a new, empty cluster (unsafe mode)", live, o.Size, names),
		RequeueAfter: PollInFlight}, true
}
