package controller

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
)

// Reasons of the conditions.
const (
	reasonAllPodsAvailable         = "AllPodsAvailable"
	reasonPodsUnavailable          = "PodsUnavailable"
	reasonRollingOut               = "RollingOut"
	reasonRolloutComplete          = "RolloutComplete"
	reasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	reasonDeploymentConflict       = "DeploymentConflict"
)

// podNames are the names of pods, sorted so that status.nodes changes only
// when the set of pods does.
func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil
	}
	return names
}

// statusFor is m's status given its Deployment d (its status as the
// Deployment controller last wrote it; zero before it exists) and its pods.
func statusFor(m *cachev1alpha1.Memcached, d *appsv1.Deployment, nodes []string) cachev1alpha1.MemcachedStatus {
	size := m.Spec.Size
	s := d.Status
	status := cachev1alpha1.MemcachedStatus{Nodes: nodes, Conditions: slices.Clone(m.Status.Conditions)}

	available := metav1.Condition{Type: cachev1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: reasonPodsUnavailable}
	if s.AvailableReplicas >= size {
		available.Status, available.Reason = metav1.ConditionTrue, reasonAllPodsAvailable
	}
	available.Message = fmt.Sprintf("%d of %d pods available", s.AvailableReplicas, size)

	// Done when the Deployment controller has seen the latest spec and
	// every pod runs the current template, with no old pod left over.
	progressing := metav1.Condition{Type: cachev1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: reasonRollingOut,
		Message: fmt.Sprintf("%d of %d pods updated, %d available", s.UpdatedReplicas, size, s.AvailableReplicas)}
	if s.ObservedGeneration >= d.Generation && s.Replicas == size && s.UpdatedReplicas == size && s.AvailableReplicas == size {
		progressing.Status, progressing.Reason = metav1.ConditionFalse, reasonRolloutComplete
	}
	// A rollout the Deployment controller gave up on (an image that cannot
	// be pulled, pods that never get ready) is not progressing: say why.
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil && c.Reason == "ProgressDeadlineExceeded" {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionFalse, reasonProgressDeadlineExceeded, c.Message
	}

	for _, c := range []metav1.Condition{available, progressing} {
		c.ObservedGeneration = m.Generation
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// conflictStatus is m's status when a Deployment of its name exists that
// it does not own: the operator leaves that Deployment alone.
func conflictStatus(m *cachev1alpha1.Memcached) cachev1alpha1.MemcachedStatus {
	status := cachev1alpha1.MemcachedStatus{Conditions: slices.Clone(m.Status.Conditions)}
	msg := fmt.Sprintf("Deployment %s exists and is not owned by this Memcached; delete it or choose another name", m.Name)
	for _, t := range []string{cachev1alpha1.ConditionAvailable, cachev1alpha1.ConditionProgressing} {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse,
			Reason: reasonDeploymentConflict, Message: msg, ObservedGeneration: m.Generation})
	}
	return status
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}
