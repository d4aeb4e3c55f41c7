package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// tolerateLostNodes makes the lost-node tolerations of running member pods
// that run out (older operators' 30 s, the admission plugin's 300 s) last
// for ever, in place (desired.LostNodeTolerationsForEver): until each member
// is replaced, a cluster would otherwise keep the eviction that deletes
// healthy members of a node that stopped reporting, all at once. A
// toleration's seconds are the part of a running pod's tolerations the API
// server lets change, and the change restarts nothing.
func (r *Reconciler) tolerateLostNodes(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation) error {
	var user []corev1.Toleration
	if c.Spec.Pod != nil {
		user = c.Spec.Pod.Tolerations
	}
	for _, p := range obs.pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		tolerations, changed := desired.LostNodeTolerationsForEver(p.Spec.Tolerations, user)
		if !changed {
			continue
		}
		before := p.DeepCopy()
		p.Spec.Tolerations = tolerations
		if err := r.Client.Patch(ctx, p, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("making the lost-node tolerations of pod %s last for ever: %w", p.Name, err)
		}
	}
	return nil
}
