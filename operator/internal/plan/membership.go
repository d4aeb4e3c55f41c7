package plan

import (
	"fmt"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func orphanPods(o Observed, _ Options, _ string) (Action, bool) {
	for _, p := range o.Pods {
		if p.Terminating || o.isMember(p.Name) {
			continue
		}
		if age := o.Now.Sub(p.Created); age < OrphanGrace {
			return wait(conditions.ReasonMembershipUnknown, fmt.Sprintf("pod %s is not a member yet", p.Name), OrphanGrace-age), true
		}
		return Action{Kind: DeleteOrphanPod, Member: p.Name, Reason: conditions.ReasonReplacingDeadMember,
			Message: fmt.Sprintf("pod %s belongs to no member", p.Name), RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

func learners(o Observed, _ Options, _ string) (Action, bool) {
	for _, m := range o.Members {
		if !m.IsLearner {
			continue
		}
		if !m.Started || !m.Healthy {
			return wait(conditions.ReasonScalingUp, fmt.Sprintf("waiting for learner %s to start", m.Name), PollInFlight), true
		}
		return Action{Kind: PromoteLearner, Member: m.Name, MemberID: m.ID, Reason: conditions.ReasonScalingUp,
			Message: fmt.Sprintf("promoting learner %s", m.Name), RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// healthGate holds every further change until each live member is healthy
// and there is a leader.
func healthGate(o Observed, opts Options, version string) (Action, bool) {
	if opts.UpgradeAllAtOnce {
		return Action{}, false
	}
	// Unsafe: a restarted member's new pod counts as rejoined.
	waitHealthy := !opts.RestartBeforeRejoin || !rolling(o, version)
	dead := map[uint64]bool{}
	for _, m := range Dead(o) {
		dead[m.ID] = true
	}
	for _, m := range o.Members {
		if dead[m.ID] {
			continue
		}
		if _, ok := o.pod(m.Name); !m.Healthy && (waitHealthy || !ok) {
			return wait(conditions.ReasonMembershipUnknown, fmt.Sprintf("waiting for member %s to be healthy", m.Name), PollInFlight), true
		}
		if p, ok := o.pod(m.Name); ok && p.Terminating {
			return wait(conditions.ReasonRestartingMember, fmt.Sprintf("waiting for pod %s to finish terminating", m.Name), PollInFlight), true
		}
	}
	if o.LeaderID == 0 {
		return wait(conditions.ReasonQuorumLost, "waiting for a leader", PollInFlight), true
	}
	return Action{}, false
}
