package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// adoptable are the objects of Observed.Adoptable, by member name.
type adoptable struct {
	pods   map[string]*corev1.Pod
	claims map[string]*corev1.PersistentVolumeClaim
}

// sortStrangers sorts the pods that carry the cluster's labels without being
// its own into those it may adopt (no controller, and a member of its etcd
// cluster) and the rest (see plan.strangers); member claims with no
// controller are adopted too. A cluster with no pod of its own reads the
// membership from the orphans themselves: they are all it could be.
func (r *Reconciler) sortStrangers(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, strangers []*corev1.Pod, orphanClaims []*corev1.PersistentVolumeClaim) {
	var orphans []*corev1.Pod
	for _, p := range strangers {
		if p.DeletionTimestamp != nil {
			continue // on its way out
		}
		if owner := metav1.GetControllerOf(p); owner != nil {
			obs.Foreign = append(obs.Foreign, fmt.Sprintf("%s (controlled by %s %s)", p.Name, owner.Kind, owner.Name))
			continue
		}
		orphans = append(orphans, p)
	}
	if len(orphans) == 0 && len(orphanClaims) == 0 {
		return
	}
	if !obs.MembershipKnown && len(obs.Pods) == 0 && obs.NoClientTLS == "" {
		var endpoints []string
		byName := map[string]*corev1.Pod{}
		for _, p := range orphans {
			if p.Status.PodIP != "" {
				endpoints = append(endpoints, podClientURL(c, p))
				byName[p.Name] = p
			}
		}
		if len(endpoints) > 0 {
			r.readMembership(ctx, obs, endpoints, byName)
		}
	}
	members := map[string]bool{}
	for _, m := range obs.Members {
		members[m.Name] = true
	}
	obs.adoptable = adoptable{pods: map[string]*corev1.Pod{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
	names := map[string]bool{}
	for _, p := range orphans {
		if !members[p.Name] {
			obs.Foreign = append(obs.Foreign, fmt.Sprintf("%s (no owner, and not a member of this cluster's etcd)", p.Name))
			continue
		}
		obs.adoptable.pods[p.Name] = p
		names[p.Name] = true
	}
	for _, pvc := range orphanClaims {
		// Unsafe on purpose (the self-test's leaves-a-claim variant): the
		// claim it made without an owner stays so.
		if members[pvc.Name] && !r.Unsafe.LeavePVCOnDelete {
			obs.adoptable.claims[pvc.Name] = pvc
			names[pvc.Name] = true
		}
	}
	obs.Adoptable = slices.Sorted(maps.Keys(names))
}

// adopt makes the cluster the controller of the given members' orphaned
// pods and claims, so that they are its members again (and deleting it
// deletes them).
func (r *Reconciler) adopt(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, names []string) error {
	for _, name := range names {
		if pod, ok := obs.adoptable.pods[name]; ok {
			if err := r.setController(ctx, c, pod); err != nil {
				return fmt.Errorf("adopting pod %s: %w", name, err)
			}
			r.event(c, corev1.EventTypeNormal, conditions.EventMemberAdopted, "Adopt", "Orphaned member %s adopted", name)
		}
		if claim, ok := obs.adoptable.claims[name]; ok {
			if err := r.setController(ctx, c, claim); err != nil {
				return fmt.Errorf("adopting claim %s: %w", name, err)
			}
		}
	}
	return nil
}

// setController patches obj (which has no controller) to be controlled by c.
func (r *Reconciler) setController(ctx context.Context, c *etcdv1beta2.EtcdCluster, obj client.Object) error {
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	if err := controllerutil.SetControllerReference(c, obj, r.Client.Scheme()); err != nil {
		return err
	}
	return r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
