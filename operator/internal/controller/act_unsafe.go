package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

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
