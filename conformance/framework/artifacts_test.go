package framework

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// A failed spec keeps the log of every container of every operator pod,
// each named, and only the operator's pods: read through the API, so a run
// without kubectl keeps them too. (The fake clientset answers every log
// request with "fake logs"; which pods and containers are asked is what
// this tests.)
func TestOperatorLogsNameEveryOperatorContainer(t *testing.T) {
	labels := map[string]string{"app": "etcd-operator"}
	pod := func(name string, l map[string]string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ops", Labels: l}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	kube := fake.NewClientset(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "etcd-operator", Namespace: "ops"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		pod("etcd-operator-a", labels, "manager", "sidecar"),
		pod("etcd-operator-b", labels, "manager"),
		pod("some-member", map[string]string{"app": "etcd"}, "etcd"),
	)
	e := &Env{Kube: kube, Profile: &profile.Profile{Operator: profile.Operator{Namespace: "ops", Deployment: "etcd-operator"}}}
	got := e.operatorLogs(context.Background(), 10)
	for _, want := range []string{"==> pod etcd-operator-a, container manager <==", "==> pod etcd-operator-a, container sidecar <==", "==> pod etcd-operator-b, container manager <=="} {
		if !strings.Contains(got, want) {
			t.Errorf("logs lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "some-member") || strings.Count(got, "fake logs") != 3 {
		t.Errorf("want exactly the three operator containers' logs:\n%s", got)
	}

	e.Profile.Operator.Deployment = "missing"
	if got := e.operatorLogs(context.Background(), 10); !strings.Contains(got, "cannot read deployment ops/missing") {
		t.Errorf("a missing deployment gives %q", got)
	}
}
