package controller

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// computeStatus derives the whole status from this pass's observation and
// decision, and the writes the API server refused. Conditions keep their
// lastTransitionTime unless their status flips. It only computes: the
// metrics follow from its result (see updateMetrics).
func computeStatus(c *etcdv1beta2.EtcdCluster, obs *observation, a plan.Action, refused []string) *etcdv1beta2.EtcdClusterStatus {
	st := c.Status.DeepCopy()
	st.ObservedGeneration = c.Generation
	st.ControlPaused = c.Spec.Paused
	st.ServiceName = desired.ClientServiceName(c.Name)
	st.ClientPort = desired.ClientPort

	n := countMembers(obs)
	st.Size = n.size
	st.Members = etcdv1beta2.MembersStatus{Ready: n.ready, Unready: n.unready}
	st.ReadyMembers = fmt.Sprintf("%d/%d", len(n.ready), c.Spec.Size)

	st.CurrentVersion = plan.CurrentVersion(obs.Observed)
	// Written on every pass from what is seen and what was written before:
	// this is how a held upgrade outlives the operator (see plan.HeldImage,
	// plan.UnhealthyImage).
	st.UnpulledImage = plan.HeldImage(obs.Observed)
	st.UnhealthyImage = plan.UnhealthyImage(obs.Observed)
	effective, refusal := plan.EffectiveVersion(obs.Observed)
	upgrading, upgradeReason, upgradeMessage := plan.UpgradeCondition(obs.Observed)

	st.Phase = phase(c, a, st.Phase, len(n.ready))
	st.Reason = statusReason(c, obs, a, refusal)
	st.TargetVersion = ""
	if upgrading {
		st.TargetVersion = effective
	}

	set := func(t string, v verdict) {
		status := metav1.ConditionFalse
		if v.ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: v.reason, Message: v.message, ObservedGeneration: c.Generation,
		})
	}
	available := availability(obs, a, st.Phase, n)
	if len(obs.alarms) > 0 {
		// An alarm stops writes (NOSPACE) or means data may differ between
		// members (CORRUPT): a person must act, whatever the quorum says.
		slices.Sort(obs.alarms)
		available.message += "; active etcd alarms: " + strings.Join(obs.alarms, ", ")
	}
	set(conditions.Available, available)
	set(conditions.Scaling, scaling(st.Size, c.Spec.Size))
	set(conditions.Recovering, recovery(obs, a))
	set(conditions.Upgrading, verdict{upgrading, upgradeReason, upgradeMessage})
	if v, ok := authorization(st.Conditions, refused); ok {
		set(conditions.Authorized, v)
	}
	// Set once a change stalled, kept up to date after.
	if stalled, reason, message := plan.StalledCondition(obs.Observed); stalled || meta.FindStatusCondition(st.Conditions, conditions.Stalled) != nil {
		set(conditions.Stalled, verdict{stalled, reason, message})
	}
	// Set once NOSPACE was seen, kept up to date after: a cluster that
	// never filled its quota gets no SpaceAvailable condition.
	if v, ok := plan.SpaceCondition(obs.Observed); ok && (!v.Status || meta.FindStatusCondition(st.Conditions, conditions.SpaceAvailable) != nil) {
		set(conditions.SpaceAvailable, verdict{v.Status, v.Reason, v.Message})
	}
	return st
}

// memberCount sorts the members (or, while membership is unknown, the pods)
// into ready and unready, both sorted by name, and counts the voters.
type memberCount struct {
	ready, unready []string
	// size is the number of members, or of pods while membership is unknown.
	size                  int
	voters, healthyVoters int
}

// countMembers: a member is ready when it is a healthy voter the plan does
// not count as dead.
func countMembers(obs *observation) memberCount {
	var n memberCount
	if obs.MembershipKnown {
		dead := map[uint64]bool{}
		for _, m := range plan.Dead(obs.Observed) {
			dead[m.ID] = true
		}
		for _, m := range obs.Members {
			if !m.IsLearner {
				n.voters++
			}
			if m.Healthy && !m.IsLearner && !dead[m.ID] {
				n.healthyVoters++
				n.ready = append(n.ready, m.Name)
			} else {
				n.unready = append(n.unready, m.Name)
			}
		}
		n.size = len(obs.Members)
	} else {
		for _, p := range obs.Pods {
			n.unready = append(n.unready, p.Name)
		}
		n.size = len(obs.Pods)
	}
	sort.Strings(n.ready)
	sort.Strings(n.unready)
	return n
}

// phase is Failed when the plan gives up, Running once ready members reach
// the wanted size, Creating for a new cluster, and current otherwise.
func phase(c *etcdv1beta2.EtcdCluster, a plan.Action, current etcdv1beta2.ClusterPhase, ready int) etcdv1beta2.ClusterPhase {
	switch {
	case a.Kind == plan.Fail:
		return etcdv1beta2.PhaseFailed
	case a.Kind == plan.Rebootstrap:
		// The self-test's known-bad mode starts a new cluster: Creating
		// until it is ready, so its new pods are not taken for a majority
		// lost again.
		return etcdv1beta2.PhaseCreating
	case ready >= c.Spec.Size && c.Spec.Size > 0:
		return etcdv1beta2.PhaseRunning
	case current == etcdv1beta2.PhaseNone:
		return etcdv1beta2.PhaseCreating
	}
	return current
}

// statusReason is status.reason: a refused version change, or the plan's
// message when it fails, finds foreign pods or the cluster is paused, or
// what a restore after every member was lost restores, while it runs.
func statusReason(c *etcdv1beta2.EtcdCluster, obs *observation, a plan.Action, refusal *plan.Refusal) string {
	switch {
	case refusal != nil:
		return refusal.Message
	case a.Kind == plan.Fail, a.Kind == plan.RefuseRestore, a.Reason == conditions.ReasonForeignPods, a.Reason == conditions.ReasonClaimsWithoutClaimSpec, a.Reason == conditions.ReasonClientTLSUnavailable,
		a.Reason == conditions.ReasonRestoringFromBackup:
		return a.Message
	case c.Spec.Paused:
		return a.Message
	}
	if what, ok := plan.RestoringAfterLoss(obs.Observed); ok {
		return what
	}
	return ""
}

// verdict is what a condition says: whether it holds, why, and in words.
type verdict struct {
	ok      bool
	reason  string
	message string
}

// availability is the Available condition: whether a quorum of voters is
// healthy, or why that cannot be told.
func availability(obs *observation, a plan.Action, ph etcdv1beta2.ClusterPhase, n memberCount) verdict {
	switch {
	case a.Kind == plan.Fail:
		return verdict{false, conditions.ReasonQuorumLost, a.Message}
	case a.Reason == conditions.ReasonRecoveringFromSurvivor:
		return verdict{false, conditions.ReasonRecoveringFromSurvivor, a.Message}
	case a.Reason == conditions.ReasonRestoringFromBackup:
		return verdict{false, conditions.ReasonRestoringFromBackup, a.Message}
	case a.Kind == plan.Wait && a.Reason == conditions.ReasonQuorumLost:
		// The plan's own words: which members are lost, and what to do.
		return verdict{false, conditions.ReasonQuorumLost, a.Message}
	case a.Reason == conditions.ReasonForeignPods && len(obs.Pods) == 0:
		return verdict{false, conditions.ReasonForeignPods, a.Message}
	case a.Reason == conditions.ReasonClientTLSUnavailable, a.Reason == conditions.ReasonClaimsWithoutClaimSpec:
		return verdict{false, a.Reason, a.Message}
	case !obs.MembershipKnown && restoringAfterLoss(obs):
		what, _ := plan.RestoringAfterLoss(obs.Observed)
		return verdict{false, conditions.ReasonRestoringFromBackup, what}
	case !obs.MembershipKnown && (ph == etcdv1beta2.PhaseCreating):
		return verdict{false, conditions.ReasonBootstrapping, "no member answers yet"}
	case !obs.MembershipKnown:
		return verdict{false, conditions.ReasonMembershipUnknown, "no member answers"}
	case n.healthyVoters >= n.voters/2+1:
		return verdict{true, conditions.ReasonQuorumHealthy, fmt.Sprintf("%d of %d voting members healthy", n.healthyVoters, n.voters)}
	}
	return verdict{false, conditions.ReasonQuorumLost, fmt.Sprintf("%d of %d voting members healthy; quorum needs %d", n.healthyVoters, n.voters, n.voters/2+1)}
}

// scaling is the Scaling condition: size members (or pods) against want.
func scaling(size, want int) verdict {
	switch {
	case size < want:
		return verdict{true, conditions.ReasonScalingUp, fmt.Sprintf("%d of %d members", size, want)}
	case size > want:
		return verdict{true, conditions.ReasonScalingDown, fmt.Sprintf("%d members, want %d", size, want)}
	}
	return verdict{false, conditions.ReasonAtDesiredSize, fmt.Sprintf("%d members", size)}
}

// recovery is the Recovering condition: a recovery from a survivor, a dead
// member being replaced, or a member restarted other than for an upgrade.
func recovery(obs *observation, a plan.Action) verdict {
	dead := plan.Dead(obs.Observed)
	switch {
	case a.Reason == conditions.ReasonRecoveringFromSurvivor:
		return verdict{true, conditions.ReasonRecoveringFromSurvivor, a.Message}
	case a.Reason == conditions.ReasonRestoringFromBackup:
		return verdict{true, conditions.ReasonRestoringFromBackup, a.Message}
	case restoringAfterLoss(obs):
		// Until the EtcdRestore says Restored: the cluster grows back from one member.
		what, _ := plan.RestoringAfterLoss(obs.Observed)
		return verdict{true, conditions.ReasonRestoringFromBackup, what}
	case obs.MembershipKnown && len(dead) > 0 && (!plan.Surplus(obs.Observed) || plan.DeadReason(obs.Observed, dead[0]) != conditions.ReasonReplacingDeadMember):
		// A stuck member is told by its own reason, also when it is surplus
		// (a member stopped for a scale down whose pod does not go).
		return verdict{true, plan.DeadReason(obs.Observed, dead[0]), fmt.Sprintf("%d dead member(s), first %s: %s", len(dead), dead[0].Name, plan.WhyDead(obs.Observed, dead[0]))}
	case a.Kind == plan.RecreatePod || (a.Kind == plan.RestartMember && !a.Upgrade):
		return verdict{true, conditions.ReasonRestartingMember, a.Message}
	}
	return verdict{false, conditions.ReasonNoDeadMembers, "every member has a running pod"}
}

// restoringAfterLoss reports an EtcdRestore in progress that the operator
// created after every member was lost.
func restoringAfterLoss(obs *observation) bool {
	_, ok := plan.RestoringAfterLoss(obs.Observed)
	return ok
}

// authorization is the Authorized condition, and whether to set it: false
// while writes are refused, true once a cluster that had a refusal has none;
// a cluster that never had one gets no Authorized condition.
func authorization(current []metav1.Condition, refused []string) (verdict, bool) {
	switch {
	case len(refused) > 0:
		msg := strings.Join(refused, "; ")
		if len(msg) > maxConditionMessage {
			msg = msg[:maxConditionMessage-3] + "..."
		}
		return verdict{false, conditions.ReasonWriteForbidden, msg}, true
	case meta.FindStatusCondition(current, conditions.Authorized) != nil:
		return verdict{true, conditions.ReasonWritesAuthorized, "the writes refused before are allowed now"}, true
	}
	return verdict{}, false
}

// maxConditionMessage is the API's limit on a condition message.
const maxConditionMessage = 32768

// refusalEvents are the Warning Events of the Upgrading condition's refusals.
var refusalEvents = map[string]string{
	conditions.ReasonDowngradeRefused:    conditions.EventUpgradeRefused,
	conditions.ReasonVersionSkewRefused:  conditions.EventUpgradeRefused,
	conditions.ReasonOldPatchRefused:     conditions.EventUpgradeRefused,
	conditions.ReasonImageNotPulled:      conditions.EventUpgradeHeld,
	conditions.ReasonNewVersionUnhealthy: conditions.EventUpgradeHeld,
}

// recordRefusal emits the refusal Event once, when the Upgrading condition
// first turns into a refusal (or a held upgrade), the client TLS Event
// once, when Available first says the operator cannot reach the members,
// a BackingOff Event each time a change that keeps failing fails again,
// and the No Space Event each time SpaceAvailable turns False for a reason.
func (r *Reconciler) recordRefusal(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus) {
	if now, ok := turned(c, st, conditions.Upgrading); ok && refusalEvents[now.Reason] != "" {
		r.event(c, corev1.EventTypeWarning, refusalEvents[now.Reason], "Upgrade", "%s", now.Message)
	}
	if now, ok := turned(c, st, conditions.Available); ok && now.Reason == conditions.ReasonClientTLSUnavailable {
		r.event(c, corev1.EventTypeWarning, conditions.EventClientTLSUnavailable, "Connect", "%s", now.Message)
	}
	// Each failure of a change that keeps failing: the message says how
	// often and when it is tried again, which changes only then.
	if now, ok := turned(c, st, conditions.Stalled); ok && now.Status == metav1.ConditionTrue && now.Reason == conditions.ReasonBackingOff {
		r.event(c, corev1.EventTypeWarning, conditions.ReasonBackingOff, "Retry", "%s", now.Message)
	}
	// On a new reason only: the message carries sizes, which change every pass.
	now := meta.FindStatusCondition(st.Conditions, conditions.SpaceAvailable)
	before := meta.FindStatusCondition(c.Status.Conditions, conditions.SpaceAvailable)
	if now != nil && now.Status == metav1.ConditionFalse && (before == nil || before.Reason != now.Reason || before.Status != now.Status) {
		r.event(c, corev1.EventTypeWarning, conditions.EventNoSpace, "Reclaim", "%s", now.Message)
	}
}

// warnEvenSize records a Warning Event when the operator first sees a spec
// (a new generation) whose size is even: it survives no more lost members
// than the odd size below it and makes split votes likelier. Once per
// generation, so a pass that changes nothing records nothing.
func (r *Reconciler) warnEvenSize(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus) {
	if c.Spec.Size%2 != 0 || st.ObservedGeneration == c.Status.ObservedGeneration {
		return
	}
	r.event(c, corev1.EventTypeWarning, conditions.EventEvenSize, "Validate",
		"spec.size %d is even: it survives the loss of %d members, as %d members do; etcd recommends an odd size (3, 5 or 7)",
		c.Spec.Size, (c.Spec.Size-1)/2, c.Spec.Size-1)
}

// turned returns condition t of st when its reason or message differ from
// those c's status has.
func turned(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus, t string) (*metav1.Condition, bool) {
	now := meta.FindStatusCondition(st.Conditions, t)
	if now == nil {
		return nil, false
	}
	before := meta.FindStatusCondition(c.Status.Conditions, t)
	return now, before == nil || before.Reason != now.Reason || before.Message != now.Message
}
