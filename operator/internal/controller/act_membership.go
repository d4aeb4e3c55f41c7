package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// addMember adds a learner first and starts its pod second: a pod must never
// run for a member etcd does not know. The pod (and claim) is checked with a
// server-side dry run before the learner is added: a refused pod would leave
// a member with no pod, removed as dead on the next pass and added again,
// for ever. A refusal adds nothing and is told (a Warning Event with the API
// server's words, and the Stalled condition); the plan tries again later,
// with a growing delay. If the pod cannot be created all the same (the
// quota filled up in between, say), the member has no pod, counts as dead
// and is removed on a later pass.
func (r *Reconciler) addMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	name := desired.NewMemberName(c.Name, r.nameSuffix())
	check := desired.Member{Name: name, Version: a.Version, InitialCluster: initialCluster(c, obs.members)}
	check.InitialCluster[name] = desired.PeerURL(c, name)
	if err := r.checkMemberObjects(ctx, c, check); err != nil {
		var refused *memberPodRefused
		if errors.As(err, &refused) {
			r.event(c, corev1.EventTypeWarning, conditions.ReasonMemberPodRefused, "Add",
				"The API server refuses the pod of a new member, so no member is added: %s", refused.err)
		}
		return err
	}
	_, members, err := obs.admin.AddLearner(ctx, desired.PeerURL(c, name))
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

// actPromoteLearner promotes a learner; one not caught up yet is retried at
// the in-flight pace, without an error (the pass turns into a Wait: nothing
// changed), until the plan's learner deadline.
func (r *Reconciler) actPromoteLearner(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := obs.admin.Promote(ctx, a.MemberID); err != nil {
		if etcdadmin.IsLearnerNotReady(err) {
			a.Kind, a.RequeueAfter = plan.Wait, plan.PollInFlight
			a.Message = fmt.Sprintf("learner %s has not caught up with the leader yet: etcd refuses its promotion", a.Member)
			return nil
		}
		return err
	}
	r.count(c, "promote")
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberPromoted, "Promote", "Learner %s promoted to voting member", a.Member)
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

// actRemoveDeadMember removes a dead member so that it can be replaced.
func (r *Reconciler) actRemoveDeadMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	r.event(c, corev1.EventTypeNormal, conditions.EventReplacingDeadMember, "Replace", "The dead member %s is being replaced", a.Member)
	if err := r.removeMember(ctx, c, obs, a); err != nil {
		return err
	}
	r.countReplacement(c)
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

// actMoveLeader moves leadership away from a member before it changes.
func (r *Reconciler) actMoveLeader(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	if err := obs.admin.MoveLeader(ctx, a.TargetID); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventLeaderMoved, "MoveLeader", "Leadership moved away from %s before changing it", a.Member)
	return nil
}
