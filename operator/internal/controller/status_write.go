package controller

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// errStatusDropped: a status written with the object did not stick.
var errStatusDropped = errors.New("the API server ignored the status written with the object: " +
	"the CRD has a status subresource, and the operator may not update etcdclusters/status")

// writeStatus stores want as c's status: through the status subresource, or,
// where that is forbidden (coreos' Role grants etcdclusters, not
// etcdclusters/status) or absent (the CRD coreos registered has none),
// through the object itself, which then is how later writes go. Such a write
// is a merge patch of status alone, so spec fields this API does not know are
// kept, with the resourceVersion as precondition. Without a status subresource
// every change of the object bumps metadata.generation: the status written
// records the generation its own write makes (see recordOwnWrite), or the
// next pass would find it stale and write again, forever.
func (r *Reconciler) writeStatus(ctx context.Context, c *etcdv1beta2.EtcdCluster, want *etcdv1beta2.EtcdClusterStatus) error {
	before := c.DeepCopy()
	var cause error
	if !r.StatusWithObject && !r.statusViaObject.Load() {
		c.Status = *want.DeepCopy()
		err := r.Client.Status().Update(ctx, c)
		if err == nil || (!apierrors.IsForbidden(err) && !apierrors.IsNotFound(err)) {
			return err
		}
		if apierrors.IsNotFound(err) && r.gone(ctx, c) {
			// Deleted since this pass read it: nothing to write. Writing
			// through the object instead would be a patch the grant may not
			// allow, and would switch every later write to that path.
			return nil
		}
		cause = err
		before.DeepCopyInto(c)
	}
	obj := before.DeepCopy()
	obj.Status = *want.DeepCopy()
	recordOwnWrite(&obj.Status, before.Generation)
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	if sameJSON(obj.Status, before.Status) {
		r.statusViaObject.Store(false) // the subresource exists: try it next time
		return errStatusDropped
	}
	r.statusViaObject.Store(true)
	if cause != nil {
		r.warnOnce(ctx, "status through the object", "writing status through the EtcdCluster itself: the status subresource is absent or not allowed",
			"cause", cause.Error())
	}
	obj.DeepCopyInto(c)
	return nil
}

// gone reports whether c no longer exists: a status write's NotFound means
// that, or a CRD without the status subresource. Asked of the API server,
// as the cache may still hold the object.
func (r *Reconciler) gone(ctx context.Context, c *etcdv1beta2.EtcdCluster) bool {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	err := reader.Get(ctx, client.ObjectKeyFromObject(c), &etcdv1beta2.EtcdCluster{})
	return apierrors.IsNotFound(err)
}

// recordOwnWrite moves the observed generations of st from generation to
// generation+1, the generation that writing st with the object makes: only
// status changes in that write, so the spec observed is the same.
func recordOwnWrite(st *etcdv1beta2.EtcdClusterStatus, generation int64) {
	if st.ObservedGeneration == generation {
		st.ObservedGeneration++
	}
	for i := range st.Conditions {
		if st.Conditions[i].ObservedGeneration == generation {
			st.Conditions[i].ObservedGeneration++
		}
	}
}

func sameJSON(a, b etcdv1beta2.EtcdClusterStatus) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// statusNotWritten handles a failed status write without failing the pass:
// status is a report, and returning the error would back off exponentially
// and hold up the next membership step. A status the API server refuses is
// kept in memory instead (see recall). It returns when to look again.
func (r *Reconciler) statusNotWritten(ctx context.Context, key types.NamespacedName, c *etcdv1beta2.EtcdCluster,
	want *etcdv1beta2.EtcdClusterStatus, err error, requeue time.Duration) time.Duration {
	switch {
	case errors.Is(err, errStatusDropped) || apierrors.IsForbidden(err):
		r.memo.Store(key, memoStatus{uid: c.UID, status: want.DeepCopy()})
		r.warnOnce(ctx, "status in "+key.Namespace, "status cannot be written; the operator keeps it in memory and goes on",
			"namespace", key.Namespace, "error", err.Error())
		// Once per cluster: Events are granted by every Role the operator
		// runs under (coreos' and the book's too), its status is not.
		if _, seen := r.warned.LoadOrStore("status event "+string(c.UID), true); !seen {
			r.event(c, corev1.EventTypeWarning, conditions.EventStatusNotWritten, "WriteStatus",
				"the cluster's status cannot be stored, so it shows none (%v); grant update on etcdclusters/status (the CRD has a status subresource) or install a CRD without one. The operator keeps the status in memory and goes on",
				err)
		}
		return requeue
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("status not written: the cluster changed meanwhile")
	default:
		log.FromContext(ctx).Info("status not written", "error", err.Error())
	}
	if requeue <= 0 || requeue > plan.PollInFlight {
		requeue = plan.PollInFlight
	}
	return requeue
}

// memoStatus is a status the API server would not store, for cluster uid.
type memoStatus struct {
	uid    types.UID
	status *etcdv1beta2.EtcdClusterStatus
}

// recall puts back the status the API server would not store. The plan reads
// status.phase to tell a new cluster from one that ran (and must never be
// bootstrapped again), so where status cannot be written it is kept in memory
// (an operator restart loses it).
func (r *Reconciler) recall(key types.NamespacedName, c *etcdv1beta2.EtcdCluster) {
	v, ok := r.memo.Load(key)
	if !ok {
		return
	}
	if m := v.(memoStatus); m.uid == c.UID {
		m.status.DeepCopyInto(&c.Status)
		return
	}
	r.memo.Delete(key)
}
