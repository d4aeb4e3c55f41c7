package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// bootstrap creates all members of a new cluster at once: they find each
// other through the headless Service, so creation takes one pod start, not N.
func (r *Reconciler) bootstrap(ctx context.Context, c *etcdv1beta2.EtcdCluster, a *plan.Action) error {
	initial := map[string]string{}
	names := make([]string, 0, a.Count)
	for range a.Count {
		name := desired.NewMemberName(c.Name, r.nameSuffix())
		names = append(names, name)
		initial[name] = desired.PeerURL(c, name)
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

// actRecreatePod starts a member again on its existing data (its claim),
// with a.Version.
func (r *Reconciler) actRecreatePod(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	m := desired.Member{Name: a.Member, Version: a.Version, InitialCluster: initialCluster(c, obs.members),
		ImageNotPulled: a.ImageNotPulled, ImageUnhealthy: a.ImageUnhealthy}
	if err := r.createMemberPod(ctx, c, m); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventMemberRestarted, "Restart", "Member %s restarted with %s", a.Member, desired.Image(c, a.Version))
	return nil
}

// actRestartMember stops a member's pod so that it comes back with the
// new image on its claim (through the budget: see stopPod).
func (r *Reconciler) actRestartMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	held, err := r.stopPod(ctx, c, obs, a)
	if err != nil || held {
		return err
	}
	if a.Upgrade {
		r.upgraded(c, "Member %s restarting with %s", a.Member, desired.Image(c, a.Version))
	}
	return nil
}

// actStopMember stops a member's pod gracefully, through the budget (see
// stopPod): etcd gets SIGTERM and the pod's grace period to stop serving;
// the plan removes the member once the pod is gone.
func (r *Reconciler) actStopMember(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	held, err := r.stopPod(ctx, c, obs, a)
	if err != nil || held {
		return err
	}
	if a.Upgrade {
		r.upgraded(c, "Member %s stopping, replaced by a member running %s", a.Member, desired.Image(c, a.Version))
	}
	return nil
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
	r.created.add(c, pod.Name, r.now())
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
		initial[name] = desired.PeerURL(c, name)
	}
	return initial
}
