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
// emptyDir roll at size 3. It reports held when the budget refused: nothing
// was stopped, a.RequeueAfter is evictionRetry, and an Event says why.
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
	err = r.Client.SubResource("eviction").Create(ctx, pod, r.eviction(pod))
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Conflict: the UID precondition failed, the pod was replaced meanwhile.
		return false, nil
	case refusedByBudget(err):
		r.memberEvent(c, pod, corev1.EventTypeNormal, conditions.EventEvictionRefused, "Stop",
			"Member %s not stopped yet, the PodDisruptionBudget allows no disruption now (%s); trying again in %s",
			a.Member, budgetRefusal(err), evictionRetry)
		a.RequeueAfter = evictionRetry
		return true, nil
	case apierrors.IsForbidden(err):
		r.warnOnce(ctx, forbiddenCause("eviction", c.Namespace, err),
			"evicting member pods is not allowed: they are stopped with a plain delete, which the PodDisruptionBudget does not count against a drain",
			"namespace", c.Namespace, "error", err.Error())
		return false, r.deletePod(ctx, obs, a.Member)
	}
	return false, fmt.Errorf("evicting pod %s: %w", pod.Name, err)
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
