package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	operatorcrds "github.com/operator-framework/api/crds"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The approveInstallPlan step against a real API server holding OLM's own
// CRDs, with this test in OLM's place: it approves the InstallPlan that
// installs the named CSV and only then ends, once the CSV has Succeeded; a
// CSV that fails, or no InstallPlan at all, is an error saying so.
func TestApproveInstallPlanOnARealAPIServer(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	kubeconfig, _ := apiservertest.Start(t)
	ctx := context.Background()
	e, err := NewEnv(ctx, Options{Kubeconfig: kubeconfig, ReportDir: t.TempDir()}, &profile.Profile{}, &profile.Config{})
	if err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{operatorcrds.InstallPlan(), operatorcrds.ClusterServiceVersion()} {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Dynamic.Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "operators"
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return e.Served("operators.coreos.com/v1alpha1/installplans") && e.Served("operators.coreos.com/v1alpha1/clusterserviceversions"), nil
	}); err != nil {
		t.Fatal("OLM's CRDs are not served")
	}

	createCSV := func(name string) {
		t.Helper()
		csv := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"displayName": "etcd operator", "install": map[string]any{"strategy": "deployment"}},
		}}
		if _, err := e.Dynamic.Resource(csvs).Namespace(ns).Create(ctx, csv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPlan := func(name, csv string) {
		t.Helper()
		plan := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"approval": "Manual", "approved": false, "clusterServiceVersionNames": []any{csv}},
		}}
		if _, err := e.Dynamic.Resource(installPlans).Namespace(ns).Create(ctx, plan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase := func(csv, phase, message string) {
		t.Helper()
		obj, err := e.Dynamic.Resource(csvs).Namespace(ns).Get(ctx, csv, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		obj.Object["status"] = map[string]any{"phase": phase, "message": message}
		if _, err := e.Dynamic.Resource(csvs).Namespace(ns).UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	approved := func(plan string) error {
		obj, err := e.Dynamic.Resource(installPlans).Namespace(ns).Get(ctx, plan, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ok, _, _ := unstructured.NestedBool(obj.Object, "spec", "approved"); !ok {
			return fmt.Errorf("InstallPlan %s not approved", plan)
		}
		return nil
	}

	// The upgrade's InstallPlan: approved, then done once the CSV succeeds.
	createPlan("install-old", "etcd-operator.v0.1.0")
	createPlan("install-new", "etcd-operator.v0.2.0")
	createCSV("etcd-operator.v0.2.0")
	done := make(chan error, 1)
	go func() { done <- e.approveInstallPlan(ctx, ns, "etcd-operator.v0.2.0", time.Minute) }()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return approved("install-new") == nil, nil
	}); err != nil {
		t.Fatalf("the InstallPlan of etcd-operator.v0.2.0 was never approved: %v", approved("install-new"))
	}
	if approved("install-old") == nil {
		t.Error("the InstallPlan of another CSV was approved too")
	}
	select {
	case err := <-done:
		t.Fatalf("the step ended before the CSV succeeded: %v", err)
	case <-time.After(2 * time.Second):
	}
	setPhase("etcd-operator.v0.2.0", "Succeeded", "install strategy completed with no errors")
	if err := <-done; err != nil {
		t.Errorf("approveInstallPlan after the CSV succeeded: %v", err)
	}

	// A CSV that fails: the step fails with OLM's message.
	createCSV("etcd-operator.v0.1.0")
	setPhase("etcd-operator.v0.1.0", "Failed", "install strategy failed: deployment etcd-operator not ready before timeout")
	err = e.approveInstallPlan(ctx, ns, "etcd-operator.v0.1.0", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "deployment etcd-operator not ready before timeout") {
		t.Errorf("approveInstallPlan of a failed CSV: %v, want OLM's message", err)
	}

	// No InstallPlan for the CSV: the step times out, saying what it waited for.
	err = e.approveInstallPlan(ctx, ns, "etcd-operator.v0.3.0", 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no InstallPlan in operators installs etcd-operator.v0.3.0") {
		t.Errorf("approveInstallPlan with no InstallPlan: %v", err)
	}
}
