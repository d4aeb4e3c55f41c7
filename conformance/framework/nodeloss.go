package framework

// The node-loss fault: a kind node's container stopped at once, as a
// machine that loses power, and started again afterwards.

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best dot-imported.

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// NodeReady reports whether a Node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitForNodeNotReady waits until the node controller marks a node not Ready
// (False or Unknown). An error means it was not seen in time: then the loss
// of the node is not known to have happened, and nothing after it can be
// judged.
func (e *Env) WaitForNodeNotReady(ctx context.Context, name string, intervals ...any) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, intervals[1].(time.Duration), intervals[0].(time.Duration), true, func(ctx context.Context) (bool, error) {
		n, err := e.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		last = fmt.Errorf("node %s is still Ready", name)
		return !NodeReady(n), nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", err, last)
	}
	return nil
}

// WaitForNodeReady waits until a node is Ready again.
func (e *Env) WaitForNodeReady(ctx context.Context, name string, intervals ...any) {
	defer waitProgress(fmt.Sprintf("node %s to be Ready", name), intervals)()
	Eventually(ctx, func(g Gomega) {
		n, err := e.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(NodeReady(n)).To(BeTrue(), "node %s is not Ready", name)
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
}

// NodeName is the node the traffic pod runs on.
func (t *TrafficPod) NodeName(ctx context.Context) (string, error) {
	p, err := t.env.Kube.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return p.Spec.NodeName, nil
}

// MemberNodes maps the cluster's member pods that are not being deleted to
// their nodes.
func (c *EtcdCluster) MemberNodes(ctx context.Context) (map[string]string, error) {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out, nil
}

// OperatorNodes names the nodes the operator's pods run on.
func (e *Env) OperatorNodes(ctx context.Context) ([]string, error) {
	if e.Profile.Operator.Deployment == "" {
		return nil, nil
	}
	pods, err := e.OperatorPods(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && !slices.Contains(out, p.Spec.NodeName) {
			out = append(out, p.Spec.NodeName)
		}
	}
	return out, nil
}
