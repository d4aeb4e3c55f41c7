package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// spaceCallTimeout bounds one defragmentation or physical compaction.
// etcd rewrites the file at about disk speed, so a full 2 GiB file may take
// tens of seconds on a slow disk. Past the bound the call returns but etcd
// carries on; a defragmenting member answers no status until it is done,
// so it counts as unhealthy and the plan changes nothing meanwhile.
const spaceCallTimeout = time.Minute

// actDefragment defragments one member, through its own endpoint.
func (r *Reconciler) actDefragment(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	endpoint, ok := obs.endpoints[a.MemberID]
	if !ok {
		return fmt.Errorf("defragmenting member %s: it did not answer", a.Member)
	}
	callCtx, cancel := context.WithTimeout(ctx, spaceCallTimeout)
	defer cancel()
	if err := obs.admin.Defragment(callCtx, endpoint); err != nil {
		return err
	}
	r.memberEvent(c, obs.pods[a.Member], corev1.EventTypeNormal, conditions.EventMemberDefragmented, "Defragment", "%s", a.Message)
	return nil
}

// actDisarmNoSpace disarms NOSPACE once the plan found every file under
// the disarm line.
func (r *Reconciler) actDisarmNoSpace(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	n, err := obs.admin.DisarmNoSpace(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		r.event(c, corev1.EventTypeNormal, conditions.EventAlarmDisarmed, "Disarm", "%s", a.Message)
	}
	return nil
}

// actCompactHistory compacts etcd's history, under NOSPACE, to the latest
// revision (see plan.reclaimSpace).
func (r *Reconciler) actCompactHistory(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) error {
	callCtx, cancel := context.WithTimeout(ctx, spaceCallTimeout)
	defer cancel()
	if err := obs.admin.CompactHistory(callCtx, a.Revision); err != nil {
		return err
	}
	r.event(c, corev1.EventTypeNormal, conditions.EventHistoryCompacted, "Compact", "%s", a.Message)
	return nil
}
