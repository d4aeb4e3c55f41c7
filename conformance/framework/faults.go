package framework

// The faults the checks inject, and what they need to see them happen.

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Pod reads one pod of the cluster's namespace.
func (c *EtcdCluster) Pod(ctx context.Context, name string) (*corev1.Pod, error) {
	return c.env.Kube.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// EtcdContainer names the container of a member pod that runs etcd: the
// one whose image is from the profile's etcd repository, else the first.
func (c *EtcdCluster) EtcdContainer(pod *corev1.Pod) string {
	repo := c.env.Profile.Etcd.Repository
	for _, ctr := range pod.Spec.Containers {
		if repo != "" && strings.HasPrefix(NormalizeImage(ctr.Image), NormalizeImage(repo)+":") {
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
