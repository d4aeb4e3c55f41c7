package framework

// The drain fault: `kubectl drain` of a node, as a platform team does
// before node maintenance.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// trafficPodLabel marks the suite's client pods. A drain leaves them
// alone: they stand for clients outside the cluster, and as bare pods
// kubectl drain would refuse the whole node for them.
const trafficPodLabel = "etcdproof-traffic"

// DrainResult is what one drain did and met.
type DrainResult struct {
	Node string
	// Evicted are the pods the drain evicted, in order.
	Evicted []string
	// BudgetRefusals counts evictions the API server refused because a
	// PodDisruptionBudget allowed no disruption (429), each retried.
	BudgetRefusals int
	// Took is how long the drain ran, cordon included.
	Took time.Duration
}

// evictRetryDelay is kubectl drain's delay before retrying a refused eviction.
const evictRetryDelay = 5 * time.Second

// DrainNode does what `kubectl drain --ignore-daemonsets
// --delete-emptydir-data --timeout` does: cordon the node, then evict every
// pod on it but DaemonSet and mirror pods (and the suite's own clients),
// retrying an eviction a PodDisruptionBudget refuses until timeout, and
// wait until the evicted pods are gone. The node stays cordoned:
// UncordonNode ends the maintenance. (kubectl's drain package would pull
// kubectl's whole command tree into the suite for these few calls.)
func (e *Env) DrainNode(ctx context.Context, name string, timeout time.Duration) (DrainResult, error) {
	res := DrainResult{Node: name}
	start := time.Now()
	defer func() { res.Took = time.Since(start) }()
	defer waitProgress(fmt.Sprintf("node %s to drain", name), []any{timeout})()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := e.setUnschedulable(ctx, name, true); err != nil {
		return res, err
	}
	pods, err := e.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return res, fmt.Errorf("drain: pods on node %s: %w", name, err)
	}
	// policy/v1 evictions are served from 1.22; older servers take v1beta1.
	_, v1Err := e.Disc.ServerResourcesForGroupVersion("policy/v1")
	legacy := v1Err != nil
	var evicted []corev1.Pod
	for _, p := range pods.Items {
		if !drainable(p) {
			continue
		}
		refused, err := e.evict(ctx, p, legacy)
		res.BudgetRefusals += refused
		if err != nil {
			return res, fmt.Errorf("draining node %s: %w", name, err)
		}
		res.Evicted = append(res.Evicted, p.Namespace+"/"+p.Name)
		evicted = append(evicted, p)
	}
	for _, p := range evicted {
		if err := e.waitForPodGone(ctx, p); err != nil {
			return res, fmt.Errorf("draining node %s: %w", name, err)
		}
	}
	res.Took = time.Since(start)
	return res, nil
}

// drainable says whether kubectl drain --ignore-daemonsets would evict p.
func drainable(p corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	if c := metav1.GetControllerOf(&p); c != nil && c.Kind == "DaemonSet" {
		return false
	}
	return p.Labels["app.kubernetes.io/name"] != trafficPodLabel
}

// evict asks the API server to evict p (policy/v1beta1 when legacy),
// retrying while a PodDisruptionBudget refuses; it returns the refusals.
func (e *Env) evict(ctx context.Context, p corev1.Pod, legacy bool) (int, error) {
	refused := 0
	meta := metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}
	for {
		var err error
		if legacy {
			err = e.Kube.PolicyV1beta1().Evictions(p.Namespace).Evict(ctx, &policyv1beta1.Eviction{ObjectMeta: meta})
		} else {
			err = e.Kube.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: meta})
		}
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return refused, nil
		case apierrors.IsTooManyRequests(err):
			refused++
		default:
			return refused, fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		select {
		case <-ctx.Done():
			return refused, fmt.Errorf("evicting pod %s/%s: refused %d times (last: %v) until the drain timed out", p.Namespace, p.Name, refused, err)
		case <-time.After(evictRetryDelay):
		}
	}
}

// waitForPodGone waits until p is deleted (or replaced by a pod of the
// same name, which kubectl drain also accepts).
func (e *Env) waitForPodGone(ctx context.Context, p corev1.Pod) error {
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		cur, err := e.Kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, nil
		}
		return cur.UID != p.UID, nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s was evicted but is not gone: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// UncordonNode makes a drained node schedulable again.
func (e *Env) UncordonNode(ctx context.Context, name string) error {
	return e.setUnschedulable(ctx, name, false)
}

func (e *Env) setUnschedulable(ctx context.Context, name string, unschedulable bool) error {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	if _, err := e.Kube.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("setting node %s unschedulable=%t: %w", name, unschedulable, err)
	}
	return nil
}

// DisruptionBudgets describes the PodDisruptionBudgets of the cluster's
// namespace that select any of its member pods ("name (maxUnavailable 1)"):
// what can make a drain wait instead of taking a quorum.
func (c *EtcdCluster) DisruptionBudgets(ctx context.Context) ([]string, error) {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(name string, sel *metav1.LabelSelector, limit string) error {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return fmt.Errorf("PodDisruptionBudget %s: %w", name, err)
		}
		for _, p := range pods {
			if !s.Empty() && s.Matches(labels.Set(p.Labels)) {
				out = append(out, fmt.Sprintf("%s (%s)", name, limit))
				return nil
			}
		}
		return nil
	}
	if _, err := c.env.Disc.ServerResourcesForGroupVersion("policy/v1"); err == nil {
		list, err := c.env.Kube.PolicyV1().PodDisruptionBudgets(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing PodDisruptionBudgets: %w", err)
		}
		for _, b := range list.Items {
			if err := add(b.Name, b.Spec.Selector, budgetLimit(b.Spec.MaxUnavailable, b.Spec.MinAvailable)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	list, err := c.env.Kube.PolicyV1beta1().PodDisruptionBudgets(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets: %w", err)
	}
	for _, b := range list.Items {
		if err := add(b.Name, b.Spec.Selector, budgetLimit(b.Spec.MaxUnavailable, b.Spec.MinAvailable)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func budgetLimit(maxUnavailable, minAvailable *intstr.IntOrString) string {
	switch {
	case maxUnavailable != nil:
		return "maxUnavailable " + maxUnavailable.String()
	case minAvailable != nil:
		return "minAvailable " + minAvailable.String()
	}
	return "no limit"
}
