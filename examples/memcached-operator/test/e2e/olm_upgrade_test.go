// Package e2e holds the walk-through's end-to-end test on a real cluster
// with OLM: `make e2e-memcached` (after `make olm memcached-images`).
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

const (
	namespace = "memcached-olm"
	// operatorDeployment is the Deployment of the CSV (config/manager).
	operatorDeployment = "memcached-operator"
	upgradedImage      = "etcdproof/memcached-operator:v2"
)

var memcacheds = schema.GroupVersionResource{Group: "cache.example.com", Version: "v1alpha1", Resource: "memcacheds"}

// podState is what an upgrade of the operator must not change in a pod.
type podState struct {
	uid      types.UID
	restarts int32
}

// TestOLMUpgradeKeepsMemcachedPods installs the operator through OLM at
// 0.1.0, runs a Memcached of 2, approves the upgrade to 0.2.0 (which
// replaces 0.1.0), and proves that OLM replaced the operator while every
// memcached pod kept running as it was (same pods, no restart), and that the
// new operator reconciles the Memcached (a scale to 3 is carried out).
func TestOLMUpgradeKeepsMemcachedPods(t *testing.T) {
	kubeconfig := os.Getenv("ETCDPROOF_E2E_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("ETCDPROOF_E2E_KUBECONFIG is not set: run `make e2e-memcached` (a kind cluster with OLM: `make olm memcached-images`)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The suite's own timeouts for installing and uninstalling.
	config, err := profile.LoadConfig(filepath.Join(root, "conformance/config/suite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Operator: profile.Operator{Namespace: namespace, Deployment: operatorDeployment}}
	e, err := framework.NewEnv(ctx, framework.Options{Kubeconfig: kubeconfig, Context: os.Getenv("ETCDPROOF_E2E_CONTEXT"), ReportDir: t.TempDir()}, p, config)
	if err != nil {
		t.Fatal(err)
	}
	here := func(rel string) string { return filepath.Join(root, "examples/memcached-operator/test/e2e", rel) }
	// The catalog server is the suite's (reference-olm uses it too): applied, left.
	install := []profile.Step{
		{Apply: filepath.Join(root, "manifests/olm")},
		{Apply: here("subscribe")},
		{ApproveInstallPlan: "memcached-operator.v0.1.0"},
	}
	uninstall := []profile.Step{{Delete: here("subscribe")}, {Delete: here("installed/crd")}, {Delete: here("installed/operator")}}
	t.Cleanup(func() {
		if err := e.RunSteps(context.Background(), uninstall); err != nil {
			t.Errorf("uninstalling: %v", err)
		}
	})
	if err := e.RunSteps(ctx, install); err != nil {
		t.Fatalf("installing 0.1.0 through OLM: %v", err)
	}

	cache := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
		"metadata": map[string]any{"name": "sessions", "namespace": namespace},
		"spec":     map[string]any{"size": int64(2)},
	}}
	if _, err := e.Dynamic.Resource(memcacheds).Namespace(namespace).Create(ctx, cache, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := waitForReadyNodes(ctx, t, e, 2)
	t.Logf("before the upgrade: %v", before)

	if err := e.RunSteps(ctx, []profile.Step{{ApproveInstallPlan: "memcached-operator.v0.2.0"}}); err != nil {
		t.Fatalf("upgrading to 0.2.0 through OLM: %v", err)
	}
	waitFor(ctx, t, "the operator's Deployment to run "+upgradedImage, func() error {
		d, err := e.Kube.AppsV1().Deployments(namespace).Get(ctx, operatorDeployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != upgradedImage {
			return fmt.Errorf("image %s", img)
		}
		if d.Status.UpdatedReplicas < 1 || d.Status.AvailableReplicas < 1 || d.Status.Replicas != d.Status.UpdatedReplicas {
			return fmt.Errorf("rollout not done: %+v", d.Status)
		}
		return nil
	})
	after := readyNodes(ctx, t, e)
	for name, was := range before {
		now, ok := after[name]
		switch {
		case !ok:
			t.Errorf("memcached pod %s is gone after the operator upgrade", name)
		case now.uid != was.uid:
			t.Errorf("memcached pod %s was recreated by the operator upgrade (uid %s, was %s)", name, now.uid, was.uid)
		case now.restarts != was.restarts:
			t.Errorf("memcached pod %s restarted during the operator upgrade (%d restarts, was %d)", name, now.restarts, was.restarts)
		}
	}

	scale := []byte(`{"spec":{"size":3}}`)
	if _, err := e.Dynamic.Resource(memcacheds).Namespace(namespace).Patch(ctx, "sessions", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForReadyNodes(ctx, t, e, 3)
}

// waitForReadyNodes waits until the Memcached lists n pods in status.nodes,
// each running and ready, and returns them.
func waitForReadyNodes(ctx context.Context, t *testing.T, e *framework.Env, n int) map[string]podState {
	t.Helper()
	var pods map[string]podState
	waitFor(ctx, t, fmt.Sprintf("%d ready memcached pods in status.nodes", n), func() error {
		pods = readyNodes(ctx, t, e)
		if len(pods) != n {
			return fmt.Errorf("%d ready: %v", len(pods), pods)
		}
		return nil
	})
	return pods
}

// readyNodes are the pods the Memcached's status.nodes names that are ready.
func readyNodes(ctx context.Context, t *testing.T, e *framework.Env) map[string]podState {
	t.Helper()
	obj, err := e.Dynamic.Resource(memcacheds).Namespace(namespace).Get(ctx, "sessions", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	names, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "nodes")
	out := map[string]podState{}
	for _, name := range names {
		pod, err := e.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || !ready(pod) {
			continue
		}
		var restarts int32
		for _, s := range pod.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
		out[name] = podState{uid: pod.UID, restarts: restarts}
	}
	return out
}

func ready(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// waitFor polls check every second until it returns nil, failing t with its
// last error after five minutes.
func waitFor(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
	}
}
