package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// computeStatus derives the whole status from this pass's observation and
// decision, and the writes the API server refused. Conditions keep their
// lastTransitionTime unless their status flips.
func computeStatus(c *etcdv1beta2.EtcdCluster, obs *observation, a plan.Action, refused []string) *etcdv1beta2.EtcdClusterStatus {
	st := c.Status.DeepCopy()
	st.ObservedGeneration = c.Generation
	st.ControlPaused = c.Spec.Paused
	st.ServiceName = desired.ClientServiceName(c.Name)
	st.ClientPort = desired.ClientPort

	var ready, unready []string
	voters, healthyVoters := 0, 0
	if obs.MembershipKnown {
		dead := map[uint64]bool{}
		for _, m := range plan.Dead(obs.Observed) {
			dead[m.ID] = true
		}
		for _, m := range obs.Members {
			if !m.IsLearner {
				voters++
			}
			if m.Healthy && !m.IsLearner && !dead[m.ID] {
				healthyVoters++
				ready = append(ready, m.Name)
			} else {
				unready = append(unready, m.Name)
			}
		}
		st.Size = len(obs.Members)
	} else {
		for _, p := range obs.Pods {
			unready = append(unready, p.Name)
		}
		st.Size = len(obs.Pods)
	}
	sort.Strings(ready)
	sort.Strings(unready)
	st.Members = etcdv1beta2.MembersStatus{Ready: ready, Unready: unready}
	st.ReadyMembers = fmt.Sprintf("%d/%d", len(ready), c.Spec.Size)
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "ready").Set(float64(len(ready)))
	metrics.Members.WithLabelValues(c.Namespace, c.Name, "unready").Set(float64(len(unready)))

	st.CurrentVersion = plan.CurrentVersion(obs.Observed)
	// Written on every pass from what is seen and what was written before:
	// this is how a held upgrade outlives the operator (see plan.HeldImage).
	st.UnpulledImage = plan.HeldImage(obs.Observed)
	effective, refusal := plan.EffectiveVersion(obs.Observed)
	upgrading, upgradeReason, upgradeMessage := plan.UpgradeCondition(obs.Observed)

	switch {
	case a.Kind == plan.Fail:
		st.Phase = etcdv1beta2.PhaseFailed
	case len(ready) >= c.Spec.Size && c.Spec.Size > 0:
		st.Phase = etcdv1beta2.PhaseRunning
	case st.Phase == etcdv1beta2.PhaseNone:
		st.Phase = etcdv1beta2.PhaseCreating
	}
	switch {
	case refusal != nil:
		st.Reason = refusal.Message
	case a.Kind == plan.Fail, a.Reason == conditions.ReasonForeignPods:
		st.Reason = a.Message
	case c.Spec.Paused:
		st.Reason = a.Message
	default:
		st.Reason = ""
	}
	st.TargetVersion = ""
	if upgrading {
		st.TargetVersion = effective
	}

	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation,
		})
	}

	switch {
	case a.Kind == plan.Fail:
		set(conditions.Available, false, conditions.ReasonQuorumLost, a.Message)
	case a.Reason == conditions.ReasonRecoveringFromSurvivor:
		set(conditions.Available, false, conditions.ReasonRecoveringFromSurvivor, a.Message)
	case a.Kind == plan.Wait && a.Reason == conditions.ReasonQuorumLost:
		// The plan's own words: which members are lost, and what to do.
		set(conditions.Available, false, conditions.ReasonQuorumLost, a.Message)
	case a.Reason == conditions.ReasonForeignPods && len(obs.Pods) == 0:
		set(conditions.Available, false, conditions.ReasonForeignPods, a.Message)
	case !obs.MembershipKnown && (st.Phase == etcdv1beta2.PhaseCreating):
		set(conditions.Available, false, conditions.ReasonBootstrapping, "no member answers yet")
	case !obs.MembershipKnown:
		set(conditions.Available, false, conditions.ReasonMembershipUnknown, "no member answers")
	case healthyVoters >= voters/2+1:
		set(conditions.Available, true, conditions.ReasonQuorumHealthy, fmt.Sprintf("%d of %d voting members healthy", healthyVoters, voters))
	default:
		set(conditions.Available, false, conditions.ReasonQuorumLost, fmt.Sprintf("%d of %d voting members healthy; quorum needs %d", healthyVoters, voters, voters/2+1))
	}

	switch {
	case st.Size < c.Spec.Size:
		set(conditions.Scaling, true, conditions.ReasonScalingUp, fmt.Sprintf("%d of %d members", st.Size, c.Spec.Size))
	case st.Size > c.Spec.Size:
		set(conditions.Scaling, true, conditions.ReasonScalingDown, fmt.Sprintf("%d members, want %d", st.Size, c.Spec.Size))
	default:
		set(conditions.Scaling, false, conditions.ReasonAtDesiredSize, fmt.Sprintf("%d members", st.Size))
	}

	dead := plan.Dead(obs.Observed)
	switch {
	case a.Reason == conditions.ReasonRecoveringFromSurvivor:
		set(conditions.Recovering, true, conditions.ReasonRecoveringFromSurvivor, a.Message)
	case obs.MembershipKnown && len(dead) > 0 && !plan.Surplus(obs.Observed):
		set(conditions.Recovering, true, conditions.ReasonReplacingDeadMember, fmt.Sprintf("%d dead member(s), first %s: %s", len(dead), dead[0].Name, plan.WhyDead(obs.Observed, dead[0])))
	case a.Kind == plan.RecreatePod || (a.Kind == plan.RestartMember && !a.Upgrade):
		set(conditions.Recovering, true, conditions.ReasonRestartingMember, a.Message)
	default:
		set(conditions.Recovering, false, conditions.ReasonNoDeadMembers, "every member has a running pod")
	}

	set(conditions.Upgrading, upgrading, upgradeReason, upgradeMessage)

	switch {
	case len(refused) > 0:
		msg := strings.Join(refused, "; ")
		if len(msg) > maxConditionMessage {
			msg = msg[:maxConditionMessage-3] + "..."
		}
		set(conditions.Authorized, false, conditions.ReasonWriteForbidden, msg)
	case meta.FindStatusCondition(st.Conditions, conditions.Authorized) != nil:
		set(conditions.Authorized, true, conditions.ReasonWritesAuthorized, "the writes refused before are allowed now")
	}
	return st
}

// maxConditionMessage is the API's limit on a condition message.
const maxConditionMessage = 32768

// refusalEvents are the Warning Events of the Upgrading condition's refusals.
var refusalEvents = map[string]string{
	conditions.ReasonDowngradeRefused:   conditions.EventUpgradeRefused,
	conditions.ReasonVersionSkewRefused: conditions.EventUpgradeRefused,
	conditions.ReasonImageNotPulled:     conditions.EventUpgradeHeld,
}

// recordRefusal emits the refusal Event once, when the Upgrading condition
// first turns into a refusal (or a held upgrade).
func (r *Reconciler) recordRefusal(c *etcdv1beta2.EtcdCluster, st *etcdv1beta2.EtcdClusterStatus) {
	now := meta.FindStatusCondition(st.Conditions, conditions.Upgrading)
	if now == nil || refusalEvents[now.Reason] == "" {
		return
	}
	before := meta.FindStatusCondition(c.Status.Conditions, conditions.Upgrading)
	if before != nil && before.Reason == now.Reason && before.Message == now.Message {
		return
	}
	r.event(c, corev1.EventTypeWarning, refusalEvents[now.Reason], "Upgrade", "%s", now.Message)
}

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
