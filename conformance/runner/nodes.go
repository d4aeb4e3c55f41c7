package runner

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// SchedulableNodes names the nodes the scheduler may place a member pod
// on: not cordoned, and without a NoSchedule or NoExecute taint. kind
// taints its control plane when the cluster has workers and leaves it
// untainted when it is the only node, so a one-node kind cluster has one
// and a 3-worker one three, as many as it has workers. A node that stopped
// answering is tainted unreachable by the node controller, so it does not
// count either.
func SchedulableNodes(ctx context.Context, kube kubernetes.Interface) ([]string, error) {
	list, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's nodes: %w", err)
	}
	var out []string
	for _, n := range list.Items {
		if schedulable(&n) {
			out = append(out, n.Name)
		}
	}
	return out, nil
}

func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return true
}

// countNodes is the number of schedulable nodes, or UnknownNodes (and a
// warning: the node checks then say for themselves) when they cannot be
// listed.
func countNodes(ctx context.Context, kube kubernetes.Interface) int {
	nodes, err := SchedulableNodes(ctx, kube)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof: warning: %v: no check is left out for want of nodes\n", err)
		return UnknownNodes
	}
	return len(nodes)
}

// CountNodes is the number of schedulable nodes of the cluster o reaches,
// or UnknownNodes (with a warning) when they cannot be counted; for the
// commands that plan runs before starting them (etcdproof selftest).
func CountNodes(ctx context.Context, o framework.Options) int {
	env, err := framework.NewEnv(ctx, o, nil, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof: warning: %v: no check is left out for want of nodes\n", err)
		return UnknownNodes
	}
	return countNodes(ctx, env.Kube)
}
