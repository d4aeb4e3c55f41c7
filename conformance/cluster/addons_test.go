package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
)

// kubeadm 1.13 writes a Corefile whose upstream is `proxy`, which the
// CoreDNS 1.6.2 of an offline old node refuses ("Unknown directive
// 'proxy'"): it is rewritten to `forward` and the crash-looping pods are
// deleted so they start on it now; a Corefile with `forward` (kubeadm 1.14+)
// and its pods are left alone. Against a real API server.
func TestForwardDNSUpstream(t *testing.T) {
	r := startAPIServer(t)
	ctx := context.Background()
	const kubeadm113 = ".:53 {\n    errors\n    health\n    proxy . /etc/resolv.conf\n    cache 30\n}\n"
	const kubeadm114 = ".:53 {\n    errors\n    health\n    forward . /etc/resolv.conf\n    cache 30\n}\n"

	for _, tc := range []struct {
		name, corefile string
		restarted      bool
	}{
		{"kubeadm 1.13", kubeadm113, true},
		{"kubeadm 1.14", kubeadm114, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"}, Data: map[string]string{"Corefile": tc.corefile}}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "coredns-1", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns", Image: "k8s.gcr.io/coredns:1.2.6"}}},
			}
			for _, obj := range []k8s.Object{cm, pod} {
				if err := r.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() {
				_ = r.Delete(ctx, cm)
				_ = r.Delete(ctx, pod)
			})

			if err := forwardDNSUpstream(ctx, r); err != nil {
				t.Fatal(err)
			}

			var got corev1.ConfigMap
			if err := r.Get(ctx, "coredns", "kube-system", &got); err != nil {
				t.Fatal(err)
			}
			if c := got.Data["Corefile"]; strings.Contains(c, "proxy") || !strings.Contains(c, "    forward . /etc/resolv.conf\n") {
				t.Errorf("Corefile after the rewrite:\n%s", c)
			}
			err := r.Get(ctx, pod.Name, pod.Namespace, &corev1.Pod{})
			if restarted := apierrors.IsNotFound(err); restarted != tc.restarted {
				t.Errorf("pod deleted: %v (get: %v), want %v", restarted, err, tc.restarted)
			}
		})
	}
}

// A 1.13 kubelet labels its node beta.kubernetes.io/os only: the node gets
// kubernetes.io/os too, as kubelets set it from 1.14; a node that has it
// keeps its own. Against a real API server.
func TestLabelNodesOS(t *testing.T) {
	r := startAPIServer(t)
	ctx := context.Background()
	old := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-1-13", Labels: map[string]string{"beta.kubernetes.io/os": "linux"}}}
	current := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-1-34", Labels: map[string]string{"beta.kubernetes.io/os": "linux", "kubernetes.io/os": "windows"}}}
	for _, n := range []*corev1.Node{old, current} {
		if err := r.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := labelNodesOS(ctx, r); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"kubelet-1-13": "linux", "kubelet-1-34": "windows"} {
		var n corev1.Node
		if err := r.Get(ctx, name, "", &n); err != nil {
			t.Fatal(err)
		}
		if got := n.Labels["kubernetes.io/os"]; got != want {
			t.Errorf("node %s: kubernetes.io/os=%q, want %q", name, got, want)
		}
	}
}

// startAPIServer runs a real kube-apiserver for the test and returns a client of it.
func startAPIServer(t *testing.T) *resources.Resources {
	t.Helper()
	kubeconfig, _ := apiservertest.Start(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	r, err := resources.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The API server of a cluster kind has just reported ready reset the
// add-on install's discovery once: such errors are tried again, a refusal
// is not.
func TestTransientAPIErrors(t *testing.T) {
	reset := errors.New(`failed to get server groups: Get "https://127.0.0.1:43987/api": read tcp 127.0.0.1:35220->127.0.0.1:43987: read: connection reset by peer`)
	if !transient(reset) {
		t.Errorf("%v: not transient", reset)
	}
	if !transient(fmt.Errorf("installing kube-router: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})) {
		t.Error("a refused connection is not transient")
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "daemonsets"}, "kube-router", errors.New("denied"))
	if transient(forbidden) {
		t.Errorf("%v: transient", forbidden)
	}
}

// On a cluster with workers, kubeadm's CoreDNS is kept on the control-plane
// node (no check stops it), and doing so twice changes nothing. Against a
// real API server.
func TestKeepDNSOnTheControlPlane(t *testing.T) {
	r := startAPIServer(t)
	ctx := context.Background()
	labels := map[string]string{"k8s-app": "kube-dns"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.12.1"}}},
			},
		},
	}
	if err := r.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := keepDNSOnTheControlPlane(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	var got appsv1.Deployment
	if err := r.Get(ctx, "coredns", "kube-system", &got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != 2 {
		t.Errorf("generation %d, want 2: one change, the second call a no-op", got.Generation)
	}
	aff := got.Spec.Template.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("no required node affinity: %+v", aff)
	}
	var roles []string
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			roles = append(roles, e.Key+" "+string(e.Operator))
		}
	}
	if want := "node-role.kubernetes.io/control-plane Exists,node-role.kubernetes.io/master Exists"; strings.Join(roles, ",") != want {
		t.Errorf("node affinity %v, want %s", roles, want)
	}
}
