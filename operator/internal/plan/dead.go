package plan

import (
	"fmt"
	"time"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// Dead reports members whose pod is gone (and not just created: see
// Observed.Unseen) or failed, or has not run for longer than the deadline
// (see NotRunning) while the member does not answer: a member that answers
// etcd's status call runs, whatever its pod looks like. A learner whose
// etcd has run for longer than the learner deadline without being promoted
// is dead too, answering or not (see learnerStuck).
func Dead(o Observed) []Member {
	var dead []Member
	for _, m := range o.Members {
		p, ok := o.pod(m.Name)
		switch {
		case !ok && o.unseen(m.Name):
		case !ok || p.Failed || (!m.Healthy && (o.overDeadline(p) || o.unansweringDead(p))) || o.learnerStuck(m):
			dead = append(dead, m)
		}
	}
	return dead
}

// unansweringGrace keeps the unsafe UnansweringIsDead off members that are
// still starting: a bootstrap would never finish otherwise.
const unansweringGrace = 10 * time.Second

// unansweringDead: under UnansweringIsDead, a running pod past its start
// whose member does not answer.
func (o Observed) unansweringDead(p Pod) bool {
	return o.UnansweringIsDead && !p.Terminating && o.Now.Sub(p.Created) > unansweringGrace
}

// liveMembers are the members counted against spec.size.
func liveMembers(o Observed) []Member {
	dead := map[uint64]bool{}
	for _, m := range Dead(o) {
		dead[m.ID] = true
	}
	var live []Member
	for _, m := range o.Members {
		if !dead[m.ID] {
			live = append(live, m)
		}
	}
	return live
}

// Surplus reports whether the live members already reach spec.size, so a
// dead member is not replaced or restarted but removed from membership: it is
// the member a scale down or an upgrade stopped (see stopFirst), or one that
// died while the cluster was too big anyway.
func Surplus(o Observed) bool {
	return len(liveMembers(o)) >= o.Size
}

func deadMembers(o Observed, opts Options, version string) (Action, bool) {
	for _, m := range Dead(o) {
		p, hasPod := o.pod(m.Name)
		// A dead member whose pod is still there but does not run: it is
		// removed and replaced whatever its volume, as restarting it on its
		// claim would bring back the same pod that does not run.
		notRunning := ""
		if hasPod && !p.Failed {
			notRunning = WhyDead(o, m)
		}
		stuck := stuckReason(o, m)
		switch {
		case Surplus(o):
			// Checked before the unsafe modes too: recreating a member that
			// was stopped on purpose would undo the scale down forever.
			if a, refused := keepQuorum(o, m); refused {
				return a, true
			}
			msg := fmt.Sprintf("member %s is stopped and not needed: removing it from membership", m.Name)
			if notRunning != "" {
				msg = fmt.Sprintf("member %s is dead (%s) and not needed: removing it from membership", m.Name, notRunning)
			}
			return Action{Kind: RemoveMember, Member: m.Name, MemberID: m.ID, Reason: conditions.ReasonScalingDown,
				Message: msg, NotRunning: notRunning, Stuck: stuck, RequeueAfter: AfterChange}, true
		case opts.UpgradeAllAtOnce && !hasPod:
			// Unsafe: restart in place whatever the volume, no gate.
			return Action{Kind: RecreatePod, Member: m.Name, Version: version, Reason: conditions.ReasonRestartingMember,
				Message: fmt.Sprintf("recreating pod of member %s", m.Name), RequeueAfter: AfterChange}, true
		case o.UsesPVC && o.PVCs[m.Name] && !hasPod:
			return Action{Kind: RecreatePod, Member: m.Name, Version: version, Reason: conditions.ReasonRestartingMember,
				Message: fmt.Sprintf("restarting member %s on its volume", m.Name), RequeueAfter: AfterChange}, true
		case o.UsesPVC && o.PVCs[m.Name] && p.Failed:
			return Action{Kind: RestartMember, Member: m.Name, Reason: conditions.ReasonRestartingMember,
				Message: fmt.Sprintf("pod of member %s failed; restarting it on its volume", m.Name), RequeueAfter: AfterChange}, true
		case opts.SkipDeadMemberRemoval && !hasPod:
			// Unsafe: a new pod on an empty data dir takes over the dead
			// member's identity instead of a membership change.
			return Action{Kind: RecreatePod, Member: m.Name, Version: version, Reason: conditions.ReasonReplacingDeadMember,
				Message: fmt.Sprintf("recreating the pod of dead member %s (unsafe mode)", m.Name), RequeueAfter: AfterChange}, true
		case opts.SkipDeadMemberRemoval:
			return Action{Kind: RestartMember, Member: m.Name, Reason: conditions.ReasonReplacingDeadMember,
				Message: fmt.Sprintf("deleting the dead pod of member %s (unsafe mode)", m.Name), RequeueAfter: AfterChange}, true
		}
		if a, refused := keepQuorum(o, m); refused {
			return a, true
		}
		return Action{Kind: RemoveDeadMember, Member: m.Name, MemberID: m.ID, Reason: conditions.ReasonReplacingDeadMember,
			Message:      fmt.Sprintf("member %s is dead (%s); removing it so a new member can replace it", m.Name, WhyDead(o, m)),
			NotRunning:   notRunning,
			Stuck:        stuck,
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// healthyVotersWithout counts the voters, and those of them but m that
// are healthy and not dead: what is left to keep quorum while m is gone.
func healthyVotersWithout(o Observed, m Member) (healthy, voters int) {
	dead := map[uint64]bool{}
	for _, d := range Dead(o) {
		dead[d.ID] = true
	}
	for _, v := range o.Members {
		if v.IsLearner {
			continue
		}
		voters++
		if v.ID != m.ID && v.Healthy && !dead[v.ID] {
			healthy++
		}
	}
	return healthy, voters
}

// keepQuorum refuses to remove dead member m unless a quorum of the current
// voters is healthy without it: the removal is a change etcd must commit,
// and a member that only looks dead (its pod does not run, yet the node may
// come back) must never be the one that decides quorum.
func keepQuorum(o Observed, m Member) (Action, bool) {
	healthy, voters := healthyVotersWithout(o, m)
	if healthy >= voters/2+1 {
		return Action{}, false
	}
	return wait(conditions.ReasonQuorumLost, fmt.Sprintf(
		"member %s is dead, but only %d of %d voting members are healthy without it and quorum needs %d: not removing it",
		m.Name, healthy, voters, voters/2+1), PollInFlight), true
}
