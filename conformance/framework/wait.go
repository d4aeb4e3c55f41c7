package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best dot-imported.

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitForOperatorReady waits for the operator Deployment to be available.
func (e *Env) WaitForOperatorReady(ctx context.Context, intervals ...any) {
	if e.Profile.Operator.Deployment == "" {
		return
	}
	defer waitProgress(fmt.Sprintf("operator deployment %s/%s to be available", e.Profile.Operator.Namespace, e.Profile.Operator.Deployment), intervals)()
	Eventually(ctx, func(g Gomega) {
		d, err := e.Kube.AppsV1().Deployments(e.Profile.Operator.Namespace).Get(ctx, e.Profile.Operator.Deployment, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		if d.Status.AvailableReplicas < 1 {
			// An image that cannot be pulled never heals: say so now.
			if msg := e.imagePullProblem(ctx, d.Namespace); msg != "" {
				StopTrying(fmt.Sprintf("operator deployment %s/%s cannot start: %s", d.Namespace, d.Name, msg)).Now()
			}
		}
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "operator deployment %s/%s has no available replica", d.Namespace, d.Name)
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
}

// WaitForHealthy waits until etcd's ground truth matches want with no
// problem and the profile's readiness claims hold; returns the time taken
// and the final truth.
func (c *EtcdCluster) WaitForHealthy(ctx context.Context, want Want, intervals ...any) (time.Duration, Truth) {
	start := time.Now()
	var last Truth
	defer waitProgress(fmt.Sprintf("cluster %s/%s to be healthy with %d members", c.Namespace, c.Name, want.Size), intervals)()
	Eventually(ctx, func(g Gomega) {
		pods, err := c.MemberPods(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		last, err = c.GroundTruth(ctx, want)
		g.Expect(err).NotTo(HaveOccurred())
		problems := last.Problems
		ready := 0
		for _, p := range pods {
			if podReady(p) {
				ready++
			}
		}
		if ready != want.Size {
			problems = append(problems, fmt.Sprintf("member pods: %d of %d ready, want %d", ready, len(pods), want.Size))
		}
		if st := c.env.Profile.Cluster.Status; st.Phase != "" && last.Claims.Phase != st.ReadyPhase {
			problems = append(problems, fmt.Sprintf("%s: phase %q, want %q", ProblemClaims, last.Claims.Phase, st.ReadyPhase))
		}
		g.Expect(problems).To(BeEmpty(), "cluster %s/%s is not healthy:\n%s", c.Namespace, c.Name, strings.Join(problems, "\n"))
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
	return time.Since(start), last
}

// WaitForExactMemberPods waits until the cluster has exactly size member
// pods, none of them terminating: a pod left over by an interrupted step
// (a member added twice, a removed member's pod never deleted) fails it.
func (c *EtcdCluster) WaitForExactMemberPods(ctx context.Context, size int, intervals ...any) {
	defer waitProgress(fmt.Sprintf("cluster %s/%s to have exactly %d member pods", c.Namespace, c.Name, size), intervals)()
	Eventually(ctx, func(g Gomega) {
		pods, err := c.MemberPods(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, p := range pods {
			names = append(names, p.Name)
			g.Expect(p.DeletionTimestamp).To(BeNil(), "member pod %s is still terminating", p.Name)
		}
		g.Expect(pods).To(HaveLen(size), "cluster %s/%s has member pods %v, want %d", c.Namespace, c.Name, names, size)
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
}

// WaitForGone waits until the CR is deleted.
func (c *EtcdCluster) WaitForGone(ctx context.Context, intervals ...any) {
	defer waitProgress(fmt.Sprintf("cluster %s/%s to be deleted", c.Namespace, c.Name), intervals)()
	Eventually(ctx, c.Gone).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(BeTrue(), "cluster %s/%s still exists", c.Namespace, c.Name)
}

// WaitForTraffic waits until the traffic pod has made a successful write.
func (t *TrafficPod) WaitForTraffic(ctx context.Context, intervals ...any) {
	defer waitProgress(fmt.Sprintf("traffic pod %s/%s to write", t.Namespace, t.Name), intervals)()
	Eventually(ctx, func(g Gomega) {
		// Port-forwarding to a pod that does not listen yet only produces
		// connection-refused noise: wait for its readiness probe first.
		p, err := t.env.Kube.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			StopTrying(fmt.Sprintf("traffic pod %s ended (%s) before serving: %s", t.Name, p.Status.Phase, p.Status.Message)).Now()
		}
		g.Expect(podReady(*p)).To(BeTrue(), "traffic pod %s is not ready yet", t.Name)
		st, err := t.Status(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.SuccessfulPuts).To(BeNumerically(">", 0), "traffic pod %s has no successful write yet", t.Name)
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
}

// DeleteNamespace deletes a namespace and waits until it is gone.
func (e *Env) DeleteNamespace(ctx context.Context, name string, intervals ...any) {
	err := e.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	defer waitProgress(fmt.Sprintf("namespace %s to be deleted", name), intervals)()
	Eventually(ctx, func() bool {
		_, err := e.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(BeTrue(), "namespace %s is not deleted", name)
}
