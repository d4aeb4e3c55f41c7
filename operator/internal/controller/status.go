package controller

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// computeStatus derives the whole status from this pass's observation and
// decision. Conditions keep their lastTransitionTime unless their status flips.
func computeStatus(c *etcdv1beta2.EtcdCluster, obs *observation, a plan.Action) *etcdv1beta2.EtcdClusterStatus {
	st := c.Status.DeepCopy()
	st.ObservedGeneration = c.Generation
	st.ControlPaused = c.Spec.Paused
	st.ServiceName = desired.ClientServiceName(c.Name)
	st.ClientPort = desired.ClientPort

	var ready, unready []string
	voters, healthyVoters := 0, 0
	if obs.MembershipKnown {
		dead := map[uint64]bool{}
		for _, m := range plan.Dead(obs.Observed) {
			dead[m.ID] = true
		}
		for _, m := range obs.Members {
			if !m.IsLearner {
				voters++
			}
			if m.Healthy && !m.IsLearner && !dead[m.ID] {
				healthyVoters++
				ready = append(ready, m.Name)
			} else {
				unready = append(unready, m.Name)
			}
		}
		st.Size = len(obs.Members)
	} else {
		for _, p := range obs.Pods {
			unready = append(unready, p.Name)
		}
		st.Size = len(obs.Pods)
	}
	sort.Strings(ready)
	sort.Strings(unready)
	st.Members = etcdv1beta2.MembersStatus{Ready: ready, Unready: unready}
	st.ReadyMembers = fmt.Sprintf("%d/%d", len(ready), c.Spec.Size)
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "ready").Set(float64(len(ready)))
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "unready").Set(float64(len(unready)))

	st.CurrentVersion = plan.CurrentVersion(obs.Observed)
	effective, refusal := plan.EffectiveVersion(obs.Observed)
	upgrading := obs.MembershipKnown && hasOutdated(obs, desired.ImageOf(obs.Repository, effective))

	switch {
	case a.Kind == plan.Fail:
		st.Phase = etcdv1beta2.PhaseFailed
	case len(ready) >= c.Spec.Size && c.Spec.Size > 0:
		st.Phase = etcdv1beta2.PhaseRunning
	case st.Phase == etcdv1beta2.PhaseNone:
		st.Phase = etcdv1beta2.PhaseCreating
	}
	switch {
	case refusal != nil:
		st.Reason = refusal.Message
	case a.Kind == plan.Fail:
		st.Reason = a.Message
	case c.Spec.Paused:
		st.Reason = a.Message
	default:
		st.Reason = ""
	}
	st.TargetVersion = ""
	if upgrading {
		st.TargetVersion = effective
	}

	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation,
		})
	}

	switch {
	case !obs.MembershipKnown && (st.Phase == etcdv1beta2.PhaseCreating):
		set(conditions.Available, false, conditions.ReasonBootstrapping, "no member answers yet")
	case !obs.MembershipKnown:
		set(conditions.Available, false, conditions.ReasonMembershipUnknown, "no member answers")
	case healthyVoters >= voters/2+1:
		set(conditions.Available, true, conditions.ReasonQuorumHealthy, fmt.Sprintf("%d of %d voting members healthy", healthyVoters, voters))
	default:
		set(conditions.Available, false, conditions.ReasonQuorumLost, fmt.Sprintf("%d of %d voting members healthy; quorum needs %d", healthyVoters, voters, voters/2+1))
	}

	switch {
	case st.Size < c.Spec.Size:
		set(conditions.Scaling, true, conditions.ReasonScalingUp, fmt.Sprintf("%d of %d members", st.Size, c.Spec.Size))
	case st.Size > c.Spec.Size:
		set(conditions.Scaling, true, conditions.ReasonScalingDown, fmt.Sprintf("%d members, want %d", st.Size, c.Spec.Size))
	default:
		set(conditions.Scaling, false, conditions.ReasonAtDesiredSize, fmt.Sprintf("%d members", st.Size))
	}

	dead := plan.Dead(obs.Observed)
	switch {
	case obs.MembershipKnown && len(dead) > 0 && !plan.Surplus(obs.Observed):
		set(conditions.Recovering, true, conditions.ReasonReplacingDeadMember, fmt.Sprintf("%d dead member(s), first %s", len(dead), dead[0].Name))
	case a.Kind == plan.RecreatePod || (a.Kind == plan.RestartMember && !a.Upgrade):
		set(conditions.Recovering, true, conditions.ReasonRestartingMember, a.Message)
	default:
		set(conditions.Recovering, false, conditions.ReasonNoDeadMembers, "every member has a running pod")
	}

	switch {
	case refusal != nil:
		set(conditions.Upgrading, false, refusal.Reason, refusal.Message)
	case upgrading:
		set(conditions.Upgrading, true, conditions.ReasonUpgradeInProgress, fmt.Sprintf("moving members to %s", desired.ImageOf(obs.Repository, effective)))
	default:
		set(conditions.Upgrading, false, conditions.ReasonUpToDate, fmt.Sprintf("every member runs %s", desired.ImageOf(obs.Repository, effective)))
	}
	return st
}

func hasOutdated(obs *observation, image string) bool {
	for _, m := range obs.Members {
		if p, ok := obs.pods[m.Name]; ok && podImage(p) != image {
			return true
		}
	}
	return false
}

func podImage(p *corev1.Pod) string {
	for _, ctr := range p.Spec.Containers {
		if ctr.Name == desired.ContainerName {
			return ctr.Image
		}
	}
	return ""
}

// recordRefusal emits the refusal Event once, when the Upgrading condition
// first turns into a refusal.
func (r *Reconciler) recordRefusal(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus) {
	now := meta.FindStatusCondition(st.Conditions, conditions.Upgrading)
	if now == nil || (now.Reason != conditions.ReasonDowngradeRefused && now.Reason != conditions.ReasonVersionSkewRefused) {
		return
	}
	before := meta.FindStatusCondition(c.Status.Conditions, conditions.Upgrading)
	if before != nil && before.Reason == now.Reason && before.Message == now.Message {
		return
	}
	r.event(c, corev1.EventTypeWarning, conditions.EventUpgradeRefused, "Upgrade", "%s", now.Message)
}
