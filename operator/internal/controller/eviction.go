package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// evictionRetry is how soon a stop that the PodDisruptionBudget refused is
// tried again: kubectl drain's own pace. Nothing says when the budget allows
// one again but its status, which the operator does not watch (pod changes
// wake it sooner).
const evictionRetry = 5 * time.Second

// evictionCallTimeout bounds one eviction, Retry-After waits included
// (client-go waits out the API server's 10 s for a budget not counted yet,
// up to 10 times, inside the call).
const evictionCallTimeout = 15 * time.Second

// evictionVersion is the policy version of the Eviction objects the API
// server takes at pods/eviction, as its discovery of core/v1 says (kubectl
// drain asks the same): "v1" from Kubernetes 1.22, "v1beta1" before; "" where
// the subresource is not listed.
func evictionVersion(core *metav1.APIResourceList) string {
	for _, r := range core.APIResources {
		if r.Name == "pods/eviction" && r.Kind == "Eviction" && r.Group == policyv1.GroupName {
			return r.Version
		}
	}
	return ""
}

// discoverEvictionVersion asks the API server for evictionVersion, once, at start.
func discoverEvictionVersion(cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	core, err := dc.ServerResourcesForGroupVersion(corev1.SchemeGroupVersion.String())
	if err != nil {
		return "", fmt.Errorf("discovering pods/eviction: %w", err)
	}
	return evictionVersion(core), nil
}

// stopPod stops the pod of a.Member for a StopMember or RestartMember. A
// planned stop of a healthy voter (a.Evict) is an eviction, which the API
// server allows only within the cluster's PodDisruptionBudget and counts
// in it: without that, a drain that evicted another voter a moment before
// and the operator's delete together took two voters, 2 of 4 during an
// emptyDir roll at size 3. It reports held when nothing was stopped: the
// budget refused (an Event says why, and a.RequeueAfter is when to try
// again), or its latest spec is not counted yet (budgetCounted: no call is
// made, and the next look is a second away).
//
// The pods of dead members are deleted (evicting them would wait for a
// budget they no longer count in), and so is every pod where eviction is
// not possible: the grant lacks create on pods/eviction (coreos' Role) or
// the API server has no Eviction API. A stop then goes as it did before,
// not counted against a drain; the grant's lack is logged once, at start
// (WithoutEviction) or at the first refusal, and never holds the operator.
func (r *Reconciler) stopPod(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation, a *plan.Action) (held bool, err error) {
	if !a.Evict || r.WithoutEviction != "" || r.evictionVersion == "" {
		return false, r.deletePod(ctx, obs, a.Member)
	}
	pod, ok := obs.pods[a.Member]
	if !ok || pod.DeletionTimestamp != nil {
		return false, nil
	}
	if !r.budgetCounted(ctx, c, obs) {
		a.RequeueAfter = plan.PollInFlight
		return true, nil
	}
	call, cancel := context.WithTimeout(ctx, evictionCallTimeout)
	defer cancel()
	err = r.Client.SubResource("eviction").Create(call, pod, r.eviction(pod))
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Conflict: the UID precondition failed, the pod was replaced meanwhile.
		return false, nil
	case budgetNotCounted(err):
		// Counted since the look above, and changed again: a matter of a
		// second, not worth an Event.
		a.RequeueAfter = plan.PollInFlight
		return true, nil
	case refusedByBudget(err):
		a.RequeueAfter = evictionRetry
		if !otherVotersReady(obs, a.Member) {
			// A voter just restarted or promoted whose pod the kubelet has
			// not reported ready yet: a matter of a probe period.
			a.RequeueAfter = plan.PollInFlight
		}
		r.memberEvent(c, pod, corev1.EventTypeNormal, conditions.EventEvictionRefused, "Stop",
			"Member %s not stopped yet, the PodDisruptionBudget allows no disruption now (%s); trying again in %s",
			a.Member, budgetRefusal(err), a.RequeueAfter)
		return true, nil
	case apierrors.IsForbidden(err):
		r.warnOnce(ctx, forbiddenCause("eviction", c.Namespace, err),
			"evicting member pods is not allowed: they are stopped with a plain delete, which the PodDisruptionBudget does not count against a drain",
			"namespace", c.Namespace, "error", err.Error())
		return false, r.deletePod(ctx, obs, a.Member)
	}
	return false, fmt.Errorf("evicting pod %s: %w", pod.Name, err)
}

// otherVotersReady: the pod of every voter but member is Ready, as the
// budget counts it.
func otherVotersReady(obs *observation, member string) bool {
	ready := map[string]bool{}
	for _, p := range obs.Pods {
		ready[p.Name] = p.Ready && !p.Terminating
	}
	for _, m := range obs.Members {
		if !m.IsLearner && m.Name != member && !ready[m.Name] {
			return false
		}
	}
	return true
}

// eviction is the Eviction of pod in the version the API server takes; the
// UID precondition makes sure a pod recreated under the same name is not hit.
func (r *Reconciler) eviction(pod *corev1.Pod) client.Object {
	meta := metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	if r.evictionVersion == policyv1beta1.SchemeGroupVersion.Version {
		return &policyv1beta1.Eviction{ObjectMeta: meta, DeleteOptions: opts}
	}
	return &policyv1.Eviction{ObjectMeta: meta, DeleteOptions: opts}
}

// refusedByBudget: the API server refused an eviction for the budget's sake
// (429 when it allows no disruption or has not counted its pods yet;
// Forbidden, naming the budget, when its status is off). A Forbidden that
// names pods is the grant's.
func refusedByBudget(err error) bool {
	if apierrors.IsTooManyRequests(err) {
		return true
	}
	var status apierrors.APIStatus
	return apierrors.IsForbidden(err) && errors.As(err, &status) &&
		status.Status().Details != nil && status.Status().Details.Group == policyv1.GroupName
}

// budgetNotCounted: the API server refused an eviction because the
// disruption controller has not yet counted the budget's latest spec.
func budgetNotCounted(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsTooManyRequests(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == policyv1.DisruptionBudgetCause && strings.Contains(cause.Message, "still being processed") {
			return true
		}
	}
	return false
}

// budgetRefusal is the API server's refusal with its causes ("The
// disruption budget quorum needs 3 healthy pods and has 3 currently").
func budgetRefusal(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err.Error()
	}
	parts := []string{strings.TrimSuffix(status.Status().Message, ".")}
	if d := status.Status().Details; d != nil {
		for _, cause := range d.Causes {
			parts = append(parts, strings.TrimSuffix(cause.Message, "."))
		}
	}
	return strings.Join(parts, ": ")
}
