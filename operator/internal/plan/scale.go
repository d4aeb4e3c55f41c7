package plan

import (
	"fmt"
	"sort"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func scale(o Observed, _ Options, version string) (Action, bool) {
	live := liveMembers(o)
	switch {
	case len(live) < o.Size:
		return Action{Kind: AddMember, Version: version, Reason: conditions.ReasonScalingUp,
			Message: fmt.Sprintf("adding a member (%d of %d)", len(live)+1, o.Size), RequeueAfter: AfterChange}, true
	case len(live) > o.Size:
		victim, upgrade := pickVictim(o, live, version)
		if victim.ID == o.LeaderID {
			return moveLeaderAway(o, live, version, victim)
		}
		reason := conditions.ReasonScalingDown
		if upgrade {
			reason = conditions.ReasonUpgradeInProgress
		}
		if stopFirst(live, victim) {
			return Action{Kind: StopMember, Member: victim.Name, MemberID: victim.ID, Upgrade: upgrade, Version: version,
				Evict:        true,
				Reason:       reason,
				Message:      fmt.Sprintf("stopping member %s; it leaves the membership once its pod is gone", victim.Name),
				RequeueAfter: AfterChange}, true
		}
		return Action{Kind: RemoveMember, Member: victim.Name, MemberID: victim.ID, Upgrade: upgrade, Version: version,
			Reason: reason, Message: fmt.Sprintf("removing member %s", victim.Name), RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// stopFirst decides the order in which a healthy member leaves (scale down,
// or the outdated member an emptyDir upgrade replaces).
//
// Stopping first (graceful pod deletion, then membership removal once the pod
// is gone) is what clients need: on SIGTERM etcd stops its gRPC server
// gracefully, the client Service drops the terminating pod, and clients see
// Unavailable, which clientv3 retries on another endpoint. A member removed
// from membership while it still serves fails its in-flight requests with
// "raft: stopped" (code Unknown), which clients do not retry.
//
// Stopping first is safe only if the other voters keep quorum meanwhile: with
// N voters, the N-1 others must all be healthy and N-1 >= N/2+1, that is N >= 3.
// With N <= 2 a stopped member would stop the cluster until its removal, so
// there membership goes first and clients may see those errors.
//
// The stop is one voter down on purpose, so it must not meet another one a
// drain takes at the same moment: with N = 4 (an emptyDir roll at size 3)
// the two would leave 2 of 4, no quorum, and on emptyDir no way back. The
// others being healthy now says nothing about the drain that evicts one of
// them between this pass's look and the stop, so the stop is an eviction
// (Action.Evict), which the PodDisruptionBudget (every voter but one)
// refuses while any other voter is being disrupted, and refuses the drain
// while this stop lasts.
func stopFirst(live []Member, victim Member) bool {
	voters, healthyOthers := 0, 0
	for _, m := range live {
		if m.IsLearner {
			continue
		}
		voters++
		if m.ID != victim.ID && m.Healthy {
			healthyOthers++
		}
	}
	return voters >= 3 && healthyOthers == voters-1 && healthyOthers >= voters/2+1
}

// pickVictim prefers an outdated member, then one on a newer minor release
// than version (the member an aborted emptyDir upgrade added), then a
// follower, then the newest name order for determinism.
func pickVictim(o Observed, live []Member, version string) (Member, bool) {
	sorted := append([]Member(nil), live...)
	newer := func(m Member) bool {
		p, ok := o.pod(m.Name)
		return ok && newerMinor(p.Version, version)
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		oi, oj := o.outdated(sorted[i].Name, version), o.outdated(sorted[j].Name, version)
		if oi != oj {
			return oi
		}
		if ni, nj := newer(sorted[i]), newer(sorted[j]); ni != nj {
			return ni
		}
		li, lj := sorted[i].ID == o.LeaderID, sorted[j].ID == o.LeaderID
		if li != lj {
			return !li
		}
		return sorted[i].Name < sorted[j].Name
	})
	return sorted[0], o.outdated(sorted[0].Name, version)
}

// moveLeaderAway hands leadership to a healthy voter, an up-to-date one
// first, then the most caught up: raft drops every proposal while a transfer
// is under way, and the transfer lasts until the target's log matches the
// leader's, so the follower furthest along (highest committed index in its
// last status) shortens that window.
func moveLeaderAway(o Observed, live []Member, version string, leader Member) (Action, bool) {
	var target *Member
	better := func(m, than Member) bool {
		if mo, to := o.outdated(m.Name, version), o.outdated(than.Name, version); mo != to {
			return !mo
		}
		return m.RaftIndex > than.RaftIndex
	}
	for i := range live {
		m := live[i]
		if m.ID == leader.ID || m.IsLearner || !m.Healthy {
			continue
		}
		if target == nil || better(m, *target) {
			target = &m
		}
	}
	if target == nil {
		return wait(conditions.ReasonMembershipUnknown, "no healthy voter to take over leadership", PollInFlight), true
	}
	return Action{Kind: MoveLeader, Member: leader.Name, MemberID: leader.ID, TargetID: target.ID,
		Reason:       conditions.ReasonUpgradeInProgress,
		Message:      fmt.Sprintf("moving leadership from %s to %s before changing it", leader.Name, target.Name),
		RequeueAfter: AfterChange}, true
}
