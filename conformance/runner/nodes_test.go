package runner

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
)

// The nodes counted are those the scheduler may place a member on, read
// from a real API server as kind's clusters show them: a lone control
// plane untainted, then tainted beside three workers; a node that joined
// but is not Ready yet, one cordoned and one lost do not count.
func TestSchedulableNodesCountsWhereMembersCanRun(t *testing.T) {
	kubeconfig, _ := apiservertest.Start(t)
	ctx := context.Background()
	env, err := framework.NewEnv(ctx, framework.Options{Kubeconfig: kubeconfig}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := nodeClient{t: t, kube: env.Kube}

	// The API server taints a new node not-ready (TaintNodesByCondition)
	// until the node controller sees its kubelet report Ready.
	c.create("etcdproof-control-plane")
	c.expectSchedulable()
	c.update("etcdproof-control-plane", ready)
	c.expectSchedulable("etcdproof-control-plane")

	c.update("etcdproof-control-plane", func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule})
	})
	for _, name := range []string{"etcdproof-worker", "etcdproof-worker2", "etcdproof-worker3"} {
		c.create(name)
		c.update(name, ready)
	}
	c.expectSchedulable("etcdproof-worker", "etcdproof-worker2", "etcdproof-worker3")

	c.update("etcdproof-worker2", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	c.update("etcdproof-worker3", func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	})
	c.expectSchedulable("etcdproof-worker")

	// PreferNoSchedule only steers the scheduler: a member may still land there.
	c.create("etcdproof-worker4")
	c.update("etcdproof-worker4", ready, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/busy", Effect: corev1.TaintEffectPreferNoSchedule})
	})
	c.expectSchedulable("etcdproof-worker", "etcdproof-worker4")
}

// ready drops the not-ready taint, as the node controller does once the
// node's kubelet reports Ready.
func ready(n *corev1.Node) {
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
}

type nodeClient struct {
	t    *testing.T
	kube kubernetes.Interface
}

func (c nodeClient) create(name string) {
	c.t.Helper()
	if _, err := c.kube.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c nodeClient) update(name string, change ...func(*corev1.Node)) {
	c.t.Helper()
	n, err := c.kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	for _, f := range change {
		f(n)
	}
	if _, err := c.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c nodeClient) expectSchedulable(want ...string) {
	c.t.Helper()
	got, err := SchedulableNodes(context.Background(), c.kube)
	if err != nil {
		c.t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		c.t.Errorf("schedulable nodes %v, want %v", got, want)
	}
}
