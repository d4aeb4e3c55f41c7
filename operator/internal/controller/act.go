package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// membershipCallTimeout bounds one membership change.
const membershipCallTimeout = 10 * time.Second

// act carries out one action. It may shorten a.RequeueAfter when the action
// has to be retried soon (a learner not caught up yet). It only dispatches:
// membership changes get callCtx, bounded by membershipCallTimeout.
func (r *Reconciler) act(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	callCtx, cancel := context.WithTimeout(ctx, membershipCallTimeout)
	defer cancel()
	if a.NotRunning != "" {
		// One Event per member (see memberEvent); a stuck state has its
		// own reason, the Recovering condition's.
		reason := conditions.EventMemberNotRunning
		if a.Stuck != "" {
			reason = a.Stuck
		}
		r.memberEvent(c, obs.pods[a.Member], corev1.EventTypeWarning, reason, "Remove", "Member %s counts as dead: %s", a.Member, a.NotRunning)
	}
	switch a.Kind {
	case plan.Bootstrap:
		return r.bootstrap(ctx, c, a)
	case plan.AddMember:
		return r.addMember(callCtx, c, obs, a)
	case plan.PromoteLearner:
		return r.actPromoteLearner(callCtx, c, obs, a)
	case plan.RemoveDeadMember:
		return r.actRemoveDeadMember(callCtx, c, obs, a)
	case plan.RemoveMember:
		return r.actRemoveMember(callCtx, c, obs, a)
	case plan.StopMember:
		return r.actStopMember(ctx, c, obs, a)
	case plan.MoveLeader:
		return r.actMoveLeader(callCtx, c, obs, a)
	case plan.RecreatePod:
		return r.actRecreatePod(ctx, c, obs, a)
	case plan.RestartMember:
		return r.actRestartMember(ctx, c, obs, a)
	case plan.ResumeBootstrap:
		return r.actResumeBootstrap(ctx, c, obs, a)
	case plan.DeleteOrphanPod:
		return r.deletePod(ctx, obs, a.Member)
	case plan.AdoptPods:
		return r.adopt(ctx, c, obs, a.Names)
	case plan.DeleteOrphanClaim:
		return r.deleteClaim(ctx, c, a.Member)
	case plan.RestartAll:
		return r.actRestartAll(ctx, c, obs, a)
	case plan.Rebootstrap:
		return r.actRebootstrap(ctx, c, obs, a)
	case plan.SeedFromSurvivor:
		return r.seedFromSurvivor(ctx, c, obs, a)
	case plan.RetireOldMembers:
		return r.retireOldMembers(ctx, c, obs, a)
	case plan.DeleteForRestore:
		return r.deleteForRestore(ctx, c, obs, a)
	case plan.CheckBackup:
		return r.checkBackup(ctx, c, obs, a)
	case plan.RefuseRestore:
		r.event(c, corev1.EventTypeWarning, conditions.EventRestoring, "Refuse", "%s", a.Message)
	case plan.SeedFromBackup:
		return r.seedFromBackup(ctx, c, obs, a)
	case plan.RestoreLatestBackup:
		return r.restoreLatestBackup(ctx, c, obs, a)
	case plan.Defragment:
		return r.actDefragment(ctx, c, obs, a)
	case plan.CompactHistory:
		return r.actCompactHistory(ctx, c, obs, a)
	case plan.DisarmNoSpace:
		return r.actDisarmNoSpace(callCtx, c, obs, a)
	case plan.Fail:
		r.actFail(c, a)
	}
	return nil
}

// actFail emits the ClusterFailed Event when the cluster first fails.
func (r *Reconciler) actFail(c *etcdv1beta2.EtcdCluster, a *plan.Action) {
	if c.Status.Phase != etcdv1beta2.PhaseFailed {
		r.event(c, corev1.EventTypeWarning, conditions.EventClusterFailed, "Fail", "%s", a.Message)
	}
}

func (r *Reconciler) event(c *etcdv1beta2.EtcdCluster, eventType, reason, action, note string, args ...any) {
	r.memberEvent(c, nil, eventType, reason, action, note, args...)
}

// memberEvent is event with the member's pod as the related object. The
// events.k8s.io recorder folds Events of one reason and action about one
// object into a series that keeps the first note, so one Event per member
// needs the member named as related.
func (r *Reconciler) memberEvent(c *etcdv1beta2.EtcdCluster, pod *corev1.Pod, eventType, reason, action, note string, args ...any) {
	if r.Recorder == nil || r.Options.Silent { // Silent: UNSAFE, self-test only
		return
	}
	if pod == nil {
		r.Recorder.Eventf(c, nil, eventType, reason, action, note, args...)
		return
	}
	r.Recorder.Eventf(c, pod, eventType, reason, action, note, args...)
}

func (r *Reconciler) count(c *etcdv1beta2.EtcdCluster, change string) {
	if !r.Options.Silent { // UNSAFE, self-test only
		metrics.MembershipChanges.WithLabelValues(c.Namespace, c.Name, change).Inc()
	}
}

func (r *Reconciler) upgraded(c *etcdv1beta2.EtcdCluster, note string, args ...any) {
	if !r.Options.Silent { // UNSAFE, self-test only
		metrics.MemberUpgrades.WithLabelValues(c.Namespace, c.Name).Inc()
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberUpgraded, "Upgrade", note, args...)
}

// countReplacement counts a dead member removed to be replaced.
func (r *Reconciler) countReplacement(c *etcdv1beta2.EtcdCluster) {
	if !r.Options.Silent { // UNSAFE, self-test only
		metrics.DeadMemberReplacements.WithLabelValues(c.Namespace, c.Name).Inc()
	}
}
