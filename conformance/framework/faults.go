package framework

// The faults the checks inject, and what they need to see them happen.

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Pod reads one pod of the cluster's namespace.
func (c *EtcdCluster) Pod(ctx context.Context, name string) (*corev1.Pod, error) {
	return c.env.Kube.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// EtcdContainer names the container of a member pod that runs etcd: the
// one whose image is from the profile's etcd repository, else the first.
func (c *EtcdCluster) EtcdContainer(pod *corev1.Pod) string {
	repo := imageRepository(c.env.Profile.Etcd.Repository)
	for _, ctr := range pod.Spec.Containers {
		if repo != "" && imageRepository(ctr.Image) == repo {
			return ctr.Name
		}
	}
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}

// WaitForContainerDeath waits until a container killed in pod (as it was
// before the kill) is seen to have died: restarted in place (its restart
// count went up), the pod failed, or the pod gone or replaced. It says
// which, or returns an error when none happened in time: then the kill is
// not known to have happened, and nothing after it can be judged.
func (c *EtcdCluster) WaitForContainerDeath(ctx context.Context, before *corev1.Pod, container string, intervals ...any) (string, error) {
	var how string
	var last error
	err := wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		now, err := c.Pod(ctx, before.Name)
		switch {
		case apierrors.IsNotFound(err):
			how = "its pod was deleted"
		case err != nil:
			last = err
			return false, nil
		case now.UID != before.UID:
			how = "its pod was replaced"
		case now.Status.Phase == corev1.PodFailed:
			how = "its pod failed"
		case RestartCount(now, container) > RestartCount(before, container):
			how = fmt.Sprintf("restarted in place (restart count %d -> %d)", RestartCount(before, container), RestartCount(now, container))
		default:
			last = fmt.Errorf("pod %s: container %s still runs as before (restart count %d)", before.Name, container, RestartCount(now, container))
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("%w: %v", err, last)
	}
	return how, nil
}

// DeletePod deletes a member pod (the replace check's fault).
func (c *EtcdCluster) DeletePod(ctx context.Context, name string) error {
	return c.env.Kube.CoreV1().Pods(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// DeletePodsNow deletes member pods at once with no grace period, as a
// node that loses power or an eviction with --force: their containers get
// no SIGTERM. It waits until none of the deleted pods is in the API any
// more (a pod recreated under the same name is a new pod), and returns an
// error when that is not seen in time: then the fault is not known to have
// happened.
func (c *EtcdCluster) DeletePodsNow(ctx context.Context, names []string, intervals ...any) error {
	now := int64(0)
	deleted := map[types.UID]string{}
	for _, name := range names {
		pod, err := c.Pod(ctx, name)
		if err != nil {
			return err
		}
		if err := c.env.Kube.CoreV1().Pods(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
			return fmt.Errorf("delete pod %s: %w", name, err)
		}
		deleted[pod.UID] = name
	}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		pods, err := c.MemberPods(ctx)
		if err != nil {
			return false, nil
		}
		left = nil
		for _, p := range pods {
			if name, ok := deleted[p.UID]; ok {
				left = append(left, name)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods %v deleted with no grace period are still in the API: %w", left, err)
	}
	return nil
}

// OperatorPods lists the pods of the operator's Deployment.
func (e *Env) OperatorPods(ctx context.Context) ([]corev1.Pod, error) {
	ns := e.Profile.Operator.Namespace
	d, err := e.Kube.AppsV1().Deployments(ns).Get(ctx, e.Profile.Operator.Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// KillOperator deletes every running pod of the operator's Deployment with
// no grace period (a crash: no SIGTERM, no lease released) and returns
// their names; the Deployment starts a new one.
func (e *Env) KillOperator(ctx context.Context) ([]string, error) {
	pods, err := e.OperatorPods(ctx)
	if err != nil {
		return nil, err
	}
	now := int64(0)
	var killed []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		err := e.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &now})
		if err != nil && !apierrors.IsNotFound(err) {
			return killed, fmt.Errorf("delete operator pod %s: %w", p.Name, err)
		}
		killed = append(killed, p.Name)
	}
	return killed, nil
}

// DiscardMemberPods deletes the member pods of a cluster whose check is
// over, with no grace period: their data goes with the check, and a
// graceful stop would only make the suite wait (the last etcd member
// spends about 7 s trying to hand leadership to peers that are gone).
func (c *EtcdCluster) DiscardMemberPods(ctx context.Context) error {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return err
	}
	now := int64(0)
	var errs []error
	for _, p := range pods {
		err := c.env.Kube.CoreV1().Pods(c.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &now})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}
