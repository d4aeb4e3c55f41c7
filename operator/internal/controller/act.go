package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
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
		r.event(c, corev1.EventTypeWarning, conditions.EventMemberNotRunning, "Remove", "Member %s counts as dead: %s", a.Member, a.NotRunning)
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
	case plan.Fail:
		r.actFail(c, a)
	}
	return nil
}

// actPromoteLearner promotes a learner; one not caught up yet is retried at
// the in-flight pace, without an error.
func (r *Reconciler) actPromoteLearner(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := obs.admin.Promote(ctx, a.MemberID); err != nil {
		if etcdadmin.IsLearnerNotReady(err) {
			a.RequeueAfter = plan.PollInFlight
			return nil
		}
		return err
	}
	r.count(c, "promote")
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberPromoted, "Promote", "Learner %s promoted to voting member", a.Member)
	return nil
}

// actRemoveDeadMember removes a dead member so that it can be replaced.
func (r *Reconciler) actRemoveDeadMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	r.event(c, corev1.EventTypeNormal, conditions.EventReplacingDeadMember, "Replace", "The dead member %s is being replaced", a.Member)
	if err := r.removeMember(ctx, c, obs, a); err != nil {
		return err
	}
	metrics.DeadMemberReplacements.WithLabelValues(c.Namespace, c.Name).Inc()
	return nil
}

// actRemoveMember removes a surplus member, or one an upgrade replaces.
func (r *Reconciler) actRemoveMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := r.removeMember(ctx, c, obs, a); err != nil {
		return err
	}
	if a.Upgrade {
		r.upgraded(c, "Member %s replaced by a member running %s", a.Member, desired.Image(c, a.Version))
	}
	return nil
}

// actStopMember deletes a member's pod gracefully: etcd gets SIGTERM and the
// pod's grace period to stop serving; the plan removes the member once the
// pod is gone.
func (r *Reconciler) actStopMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := r.deletePod(ctx, obs, a.Member); err != nil {
		return err
	}
	if a.Upgrade {
		r.upgraded(c, "Member %s stopping, replaced by a member running %s", a.Member, desired.Image(c, a.Version))
	}
	return nil
}

// actMoveLeader moves leadership away from a member before it changes.
func (r *Reconciler) actMoveLeader(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := obs.admin.MoveLeader(ctx, a.TargetID); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventLeaderMoved, "MoveLeader", "Leadership moved away from %s before changing it", a.Member)
	return nil
}

// actRecreatePod starts a member again on its existing data (its claim),
// with a.Version.
func (r *Reconciler) actRecreatePod(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	m := desired.Member{Name: a.Member, Version: a.Version, InitialCluster: initialCluster(c, obs.members), ImageNotPulled: a.ImageNotPulled}
	if err := r.createMemberPod(ctx, c, m); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberRestarted, "Restart", "Member %s restarted with %s", a.Member, desired.Image(c, a.Version))
	return nil
}

// actRestartMember deletes a member's pod so that it comes back with the
// new image on its claim.
func (r *Reconciler) actRestartMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := r.deletePod(ctx, obs, a.Member); err != nil {
		return err
	}
	if a.Upgrade {
		r.upgraded(c, "Member %s restarting with %s", a.Member, desired.Image(c, a.Version))
	}
	return nil
}

// actResumeBootstrap creates the missing pod of an unfinished bootstrap,
// with the version, initial cluster and token of its peer's pod a.From.
func (r *Reconciler) actResumeBootstrap(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	from, ok := obs.pods[a.From]
	if !ok {
		return nil
	}
	command := from.Spec.Containers[0].Command
	m := desired.Member{
		Name: a.Member, Version: from.Annotations[desired.AnnotationVersion],
		InitialCluster: desired.BootstrapCluster(command), NewCluster: true, Token: desired.TokenOf(command),
	}
	if err := r.createMemberPod(ctx, c, m); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventNewMemberAdded, "Bootstrap", "New member %s added to cluster", a.Member)
	return nil
}

// actRestartAll is unsafe on purpose: every pod is force-deleted and
// recreated at once, with no health gate and no regard for quorum or data.
func (r *Reconciler) actRestartAll(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	initial := initialCluster(c, obs.members)
	for _, name := range a.Names {
		pod, ok := obs.pods[name]
		if !ok {
			continue
		}
		if err := r.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting pod %s: %w", name, err)
		}
		if err := r.createMemberPod(ctx, c, desired.Member{Name: name, Version: a.Version, InitialCluster: initial}); err != nil {
			return err
		}
		r.upgraded(c, "Member %s restarted with %s", name, desired.Image(c, a.Version))
	}
	return nil
}

// actRebootstrap is unsafe on purpose: the pods and claims of the members
// left are deleted, their data thrown away, and a new cluster bootstrapped.
func (r *Reconciler) actRebootstrap(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	for _, name := range a.Names {
		if pod, ok := obs.pods[name]; ok {
			if err := r.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting pod %s: %w", name, err)
			}
		}
		if err := r.deleteClaim(ctx, c, name); err != nil {
			return err
		}
	}
	return r.bootstrap(ctx, c, a)
}

// actFail emits the ClusterFailed Event when the cluster first fails.
func (r *Reconciler) actFail(c *etcdv1beta2.EtcdCluster, a *plan.Action) {
	if c.Status.Phase != etcdv1beta2.PhaseFailed {
		r.event(c, corev1.EventTypeWarning, conditions.EventClusterFailed, "Fail", "%s", a.Message)
	}
}

func (r *Reconciler) event(c *etcdv1beta2.EtcdCluster, eventType, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(c, nil, eventType, reason, action, note, args...)
	}
}

func (r *Reconciler) count(c *etcdv1beta2.EtcdCluster, change string) {
	metrics.MembershipChanges.WithLabelValues(c.Namespace, c.Name, change).Inc()
}

func (r *Reconciler) upgraded(c *etcdv1beta2.EtcdCluster, note string, args ...any) {
	metrics.MemberUpgrades.WithLabelValues(c.Namespace, c.Name).Inc()
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberUpgraded, "Upgrade", note, args...)
}

// bootstrap creates all members of a new cluster at once: they find each
// other through the headless Service, so creation takes one pod start, not N.
func (r *Reconciler) bootstrap(ctx context.Context, c *etcdv1beta2.EtcdCluster, a *plan.Action) error {
	initial := map[string]string{}
	names := make([]string, 0, a.Count)
	for range a.Count {
		name := desired.NewMemberName(c.Name, r.nameSuffix())
		names = append(names, name)
		initial[name] = desired.PeerURL(name, c.Name, c.Namespace)
	}
	for _, name := range names {
		m := desired.Member{Name: name, Version: a.Version, InitialCluster: initial, NewCluster: true, Token: string(c.UID)}
		if err := r.createMemberPod(ctx, c, m); err != nil {
			return err
		}
		r.event(c, corev1.EventTypeNormal, conditions.EventNewMemberAdded, "Bootstrap", "New member %s added to cluster", name)
	}
	return nil
}

// addMember adds a learner first and starts its pod second: a pod must never
// run for a member etcd does not know. If the pod cannot be created the
// member has no pod, counts as dead and is removed on a later pass.
func (r *Reconciler) addMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	name := desired.NewMemberName(c.Name, r.nameSuffix())
	_, members, err := obs.admin.AddLearner(ctx, desired.PeerURL(name, c.Name, c.Namespace))
	if err != nil {
		return err
	}
	r.count(c, "add")
	if err := r.createMemberPod(ctx, c, desired.Member{Name: name, Version: a.Version, InitialCluster: initialCluster(c, members)}); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventNewMemberAdded, "Add", "New member %s added to cluster", name)
	return nil
}

// removeMember removes a member from etcd, then deletes its pod (unless the
// plan stopped it first and it is gone already) and its claim.
func (r *Reconciler) removeMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := obs.admin.Remove(ctx, a.MemberID); err != nil {
		return err
	}
	r.count(c, "remove")
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberRemoved, "Remove", "Existing member %s removed from the cluster", a.Member)
	if err := r.deletePod(ctx, obs, a.Member); err != nil {
		return err
	}
	if desired.UsesPVC(c) {
		return r.deleteClaim(ctx, c, desired.PVCName(a.Member))
	}
	return nil
}

func (r *Reconciler) deleteClaim(ctx context.Context, c *etcdv1beta2.EtcdCluster, name string) error {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Namespace, pvc.Name = c.Namespace, name
	if err := r.Client.Delete(ctx, pvc); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting claim %s: %w", name, err)
	}
	return nil
}

func initialCluster(c *etcdv1beta2.EtcdCluster, members []etcdadmin.Member) map[string]string {
	initial := map[string]string{}
	for _, m := range members {
		name := memberName(m)
		if name == "" {
			continue
		}
		initial[name] = desired.PeerURL(name, c.Name, c.Namespace)
	}
	return initial
}

func (r *Reconciler) createMemberPod(ctx context.Context, c *etcdv1beta2.EtcdCluster, m desired.Member) error {
	if pvc := desired.MemberPVC(c, m.Name); pvc != nil {
		if r.Unsafe.LeavesClaim(m) {
			// Unsafe on purpose: no owner, so deleting the cluster leaves it.
			pvc.OwnerReferences = nil
		}
		if err := r.Client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating claim %s: %w", pvc.Name, err)
		}
	}
	pod := desired.MemberPod(c, m, r.Unsafe)
	if err := r.Client.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // the old pod is still terminating; the next pass retries
		}
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	return nil
}

func (r *Reconciler) deletePod(ctx context.Context, obs *observation, name string) error {
	pod, ok := obs.pods[name]
	if !ok || pod.DeletionTimestamp != nil {
		return nil
	}
	// The UID precondition makes sure a pod recreated under the same name is not hit.
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", name, err)
	}
	return nil
}
