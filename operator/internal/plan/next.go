package plan

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
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

// Dead reports members whose pod is gone or failed, or has not run for
// longer than the deadline (see NotRunning) while the member does not answer:
// a member that answers etcd's status call runs, whatever its pod looks like.
func Dead(o Observed) []Member {
	var dead []Member
	for _, m := range o.Members {
		p, ok := o.pod(m.Name)
		if !ok || p.Failed || (!m.Healthy && o.overDeadline(p)) {
			dead = append(dead, m)
		}
	}
	return dead
}

func wait(reason, msg string, after time.Duration) Action {
	return Action{Kind: Wait, Reason: reason, Message: msg, RequeueAfter: after}
}

// Next returns the one next safe action. Checks run in order of urgency and
// the first that applies wins: recover, then finish a membership change, then
// scale, then upgrade. When a member pod that does not run will pass the
// deadline before the next look, the next look is at the deadline. A pod
// recreated on its claim gets its version from recreating.
func Next(o Observed, opts Options) Action {
	a := recreating(o, next(o, opts))
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
	if a, ok := strangers(o); ok {
		return a
	}
	version, _ := EffectiveVersion(o)
	if a, ok := restartUnpulled(o); ok {
		return a
	}
	if a, ok := unsafeRebootstrap(o, opts, version); ok {
		return a
	}
	if a, ok := recoverFromSurvivor(o, version); ok {
		return a
	}
	if !o.MembershipKnown {
		return withoutMembership(o, version)
	}
	for _, step := range []func(Observed, Options, string) (Action, bool){
		orphanPods, orphanClaims, deadMembers, learners, healthGate, scale, upgrade,
	} {
		if a, ok := step(o, opts, version); ok {
			return a
		}
	}
	return Action{Kind: Nothing, Reason: conditions.ReasonAtDesiredSize, RequeueAfter: PollSteady}
}

func withoutMembership(o Observed, version string) Action {
	live := 0
	for _, p := range o.Pods {
		if !p.Terminating {
			live++
		}
	}
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
	if live == 0 && (o.Phase == etcdv1beta2.PhaseRunning || o.Phase == etcdv1beta2.PhaseFailed) && !o.UsesPVC {
		return Action{Kind: Fail, Reason: conditions.ReasonAllMembersLost,
			Message: "every member pod is gone and members kept their data on emptyDir: the data is lost; delete and recreate the EtcdCluster to start a new cluster"}
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
				Message: msg, NotRunning: notRunning, RequeueAfter: AfterChange}, true
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
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// keepQuorum refuses to remove dead member m unless a quorum of the current
// voters is healthy without it: the removal is a change etcd must commit,
// and a member that only looks dead (its pod does not run, yet the node may
// come back) must never be the one that decides quorum.
func keepQuorum(o Observed, m Member) (Action, bool) {
	dead := map[uint64]bool{}
	for _, d := range Dead(o) {
		dead[d.ID] = true
	}
	voters, healthy := 0, 0
	for _, v := range o.Members {
		if v.IsLearner {
			continue
		}
		voters++
		if v.ID != m.ID && v.Healthy && !dead[v.ID] {
			healthy++
		}
	}
	if healthy >= voters/2+1 {
		return Action{}, false
	}
	return wait(conditions.ReasonQuorumLost, fmt.Sprintf(
		"member %s is dead, but only %d of %d voting members are healthy without it and quorum needs %d: not removing it",
		m.Name, healthy, voters, voters/2+1), PollInFlight), true
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
func healthGate(o Observed, opts Options, _ string) (Action, bool) {
	if opts.UpgradeAllAtOnce {
		return Action{}, false
	}
	dead := map[uint64]bool{}
	for _, m := range Dead(o) {
		dead[m.ID] = true
	}
	for _, m := range o.Members {
		if dead[m.ID] {
			continue
		}
		if !m.Healthy {
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

func moveLeaderAway(o Observed, live []Member, version string, leader Member) (Action, bool) {
	var target *Member
	for i := range live {
		m := live[i]
		if m.ID == leader.ID || m.IsLearner || !m.Healthy {
			continue
		}
		if target == nil || (!o.outdated(m.Name, version) && o.outdated(target.Name, version)) {
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
