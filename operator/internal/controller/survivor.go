package controller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// readLocal asks each member pod on its own what it knows (plan.Local): once
// quorum is lost that is all there is to read. Each answer is matched to its
// pod through the member's own name, not the endpoint it came from.
func (r *Reconciler) readLocal(ctx context.Context, obs *observation, endpoints []string) {
	admin, err := r.Dial(endpoints, obs.tls)
	if err != nil {
		return
	}
	defer func() { _ = admin.Close() }()
	callCtx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	for _, l := range admin.Locals(callCtx) {
		local := plan.Local{MemberID: l.Status.MemberID, RaftIndex: l.Status.RaftIndex, LeaderID: l.Status.LeaderID}
		for _, m := range l.Members {
			name := memberName(m)
			if m.ID == local.MemberID {
				local.Pod = name
			}
			local.Members = append(local.Members, plan.Member{ID: m.ID, Name: name, IsLearner: m.IsLearner, Started: m.Name != ""})
		}
		if _, ok := obs.pods[local.Pod]; ok {
			obs.Local = append(obs.Local, local)
		}
	}
}

// withoutPods leaves the client URLs of the named pods out of endpoints.
func withoutPods(c *etcdv1beta2.EtcdCluster, endpoints []string, pods map[string]*corev1.Pod, names []string) []string {
	leave := map[string]bool{}
	for _, name := range names {
		if p, ok := pods[name]; ok {
			leave[podClientURL(c, p)] = true
		}
	}
	return slices.DeleteFunc(endpoints, func(ep string) bool { return leave[ep] })
}

// seedFromSurvivor creates the one member of a new cluster, whose init
// container copies the survivor's data over the survivor's pod IP (its DNS
// name is published only while it is ready, which it is not without quorum).
// The pod records where its data came from and which pods it replaces, which
// is all later passes need, whichever operator runs them.
func (r *Reconciler) seedFromSurvivor(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	survivor, ok := obs.pods[a.From]
	if !ok || survivor.Status.PodIP == "" {
		return nil
	}
	name := desired.NewMemberName(c.Name, r.nameSuffix())
	s := desired.Seed{Image: r.SeedImage, From: a.From, FromURL: podClientURL(c, survivor), RaftIndex: a.RaftIndex, Replaces: a.Names}
	pod := desired.SeedPod(c, desired.Member{Name: name, Version: a.Version}, s, r.Unsafe)
	if err := r.Client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating seeded pod %s: %w", name, err)
	}
	r.created.add(c, name, r.now())
	r.event(c, corev1.EventTypeWarning, conditions.EventRecoveringFromSurvivor, "Seed", "%s. New member: %s", a.Message, name)
	return nil
}

// retireOldMembers deletes the old cluster's pods once the seeded member runs.
func (r *Reconciler) retireOldMembers(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	for _, name := range a.Names {
		if err := r.deletePod(ctx, obs, name); err != nil {
			return err
		}
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventRecoveringFromSurvivor, "Retire", "%s", a.Message)
	return nil
}
