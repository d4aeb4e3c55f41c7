package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/crdinstall"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
)

// coreosInstall is coreos etcd-operator v0.9.4's install as the conformance
// profile applies it (its book: ServiceAccount, namespaced Role, RoleBinding).
var coreosInstall = filepath.Join("..", "..", "..", "conformance", "profiles", "coreos-v0.9.4")

// coreosNamespace is the namespace that install puts the operator in.
const coreosNamespace = "etcd-operator"

// TestDropInForCoreosInstall runs the operator binary's wiring (run) the way
// coreos' Deployment runs it: no flags but --create-crd, MY_POD_NAMESPACE and
// MY_POD_NAME, and only the grant of coreos' Role, which has no
// etcdclusters/status, no Leases, no events.k8s.io and no
// PodDisruptionBudgets. Three installs follow one another on one API server:
//
//   - current: coreos' own CRD (no status subresource, no schema) and
//     --create-crd=false, as on Kubernetes 1.22+;
//   - book: the operator registers its CRD itself (over coreos' one) with the
//     book's CRD grant; it leaves out the status subresource it may not write;
//   - the operator's CRD with the status subresource, which coreos' Role may
//     not write: status is refused, and membership steps go on regardless.
func TestDropInForCoreosInstall(t *testing.T) {
	gates, restCfg, admin, asOperator := startCoreosAPIServer(t)
	ctx := context.Background()
	ns := coreosNamespace
	kubelet := newFakeKubelet(t, admin, ns)

	// current: coreos' CRD, --create-crd=false.
	apply(t, admin, ns, filepath.Join(coreosInstall, "current", "crd.yaml"))
	waitServed(t, restCfg)
	stop := startAsCoreos(t, asOperator, gates, kubelet, "--create-crd=false")
	a := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": etcdv1beta2.GroupVersion.String(), "kind": "EtcdCluster",
		"metadata": map[string]any{"name": "a", "namespace": ns},
		// notInThisAPI: coreos' CRD keeps any field; writing status must not drop it.
		"spec": map[string]any{"size": int64(3), "version": "3.5.21", "notInThisAPI": "kept"},
	}}
	if err := admin.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	kubelet.runMembers(t, "a", 3)
	running := waitRunning(t, admin, ns, "a", 3)
	if err := admin.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(a.Object, "spec", "notInThisAPI"); v != "kept" {
		t.Errorf("status written through the object dropped a spec field this API does not know: %v", a.Object["spec"])
	}
	waitFor(t, "core/v1 Events from the operator", func() error {
		return coreEvents(ctx, admin, ns, conditions.EventNewMemberAdded)
	})
	var leases coordinationv1.LeaseList
	if err := admin.List(ctx, &leases, client.InNamespace(ns)); err != nil || len(leases.Items) != 0 {
		t.Errorf("leader election without a Lease grant: %d Leases (%v)", len(leases.Items), err)
	}
	scale(t, admin, ns, "a", 2)
	scaled := waitRunning(t, admin, ns, "a", 2)
	waitFor(t, "the Member Removed Event", func() error { return coreEvents(ctx, admin, ns, conditions.EventMemberRemoved) })
	// Each status write through the object bumps its generation; a write
	// that did not record that would make the next pass write again, forever.
	if d := scaled.Generation - running.Generation; d > 30 {
		t.Errorf("generation went from %d to %d during one scale-down: status is rewritten in a loop", running.Generation, scaled.Generation)
	}
	stop()

	// book: --create-crd with the book's grant on CRDs.
	apply(t, admin, ns, filepath.Join(coreosInstall, "book", "crd-rbac.yaml"))
	stop = startAsCoreos(t, asOperator, gates, kubelet)
	waitFor(t, "coreos' CRD replaced by the operator's, without the status subresource", func() error {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := admin.Get(ctx, client.ObjectKey{Name: "etcdclusters.etcd.database.coreos.com"}, crd); err != nil {
			return err
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if len(versions) != 1 {
			return fmt.Errorf("versions %v", versions)
		}
		v := versions[0].(map[string]any)
		if _, ours, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size"); !ours {
			return fmt.Errorf("not the operator's: %v", v)
		}
		if _, has, _ := unstructured.NestedMap(v, "subresources", "status"); has {
			return fmt.Errorf("a status subresource coreos' Role may not write: %v", v["subresources"])
		}
		return nil
	})
	if err := admin.Create(ctx, newCluster(ns, "b", 1)); err != nil {
		t.Fatal(err)
	}
	kubelet.runMembers(t, "b", 1)
	waitRunning(t, admin, ns, "b", 1)
	stop()

	// The operator's CRD with its status subresource: coreos' Role may not
	// write status at all. Creation and scaling must not wait for it.
	installer, err := client.New(restCfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := func(gv string) (bool, error) {
		return discoveryServes(restCfg, gv), nil
	}
	if _, err := crdinstall.Install(ctx, installer, served, crdinstall.Options{}); err != nil {
		t.Fatal(err)
	}
	stop = startAsCoreos(t, asOperator, gates, kubelet, "--create-crd=false")
	if err := admin.Create(ctx, newCluster(ns, "c", 2)); err != nil {
		t.Fatal(err)
	}
	pods := kubelet.runMembers(t, "c", 2)
	admin2 := dialMembers(t, kubelet, pods)
	waitFor(t, "cluster c bootstrapped with its status refused", func() error { return membersHealthy(ctx, admin2, 2) })
	scale(t, admin, ns, "c", 1)
	waitFor(t, "cluster c scaled to 1 with its status refused", func() error {
		if err := membersHealthy(ctx, admin2, 1); err != nil {
			return err
		}
		left, err := memberPods(ctx, admin, ns, "c")
		if err == nil && len(left) != 1 {
			err = fmt.Errorf("%d pods", len(left))
		}
		return err
	})
	var c etcdv1beta2.EtcdCluster
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c"}, &c); err != nil {
		t.Fatal(err)
	}
	if c.Status.Phase != etcdv1beta2.PhaseNone {
		t.Errorf("status written although coreos' Role may not write etcdclusters/status: %+v", c.Status)
	}
	var budgets policyv1.PodDisruptionBudgetList
	if discoveryServes(restCfg, policyv1.SchemeGroupVersion.String()) {
		if err := admin.List(ctx, &budgets, client.InNamespace(ns)); err != nil || len(budgets.Items) != 0 {
			t.Errorf("PodDisruptionBudgets without a grant: %d (%v)", len(budgets.Items), err)
		}
	}
	stop()
}

// startCoreosAPIServer starts a real API server with coreos' install applied
// as far as its namespace, ServiceAccount and Role, and the environment of
// coreos' Deployment set. admin may do anything; asOperator acts as coreos'
// ServiceAccount, with that Role's grant only. Skips without envtest.
func startCoreosAPIServer(t *testing.T) (gates *kubecompat.Gates, restCfg *rest.Config, admin client.Client, asOperator *rest.Config) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set; run `make test`")
	}
	gates = kubecompat.Install() // before any client, as main does
	env := &envtest.Environment{}
	restCfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if os.Getenv("ETCDPROOF_TEST_OPERATOR_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(etcdv1beta2.AddToScheme(scheme))
	admin, err = client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := coreosNamespace
	if err := admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	apply(t, admin, ns, filepath.Join(coreosInstall, "base", "rbac.yaml"))
	asOperator = rest.CopyConfig(restCfg)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":etcd-operator"}
	t.Setenv("POD_NAMESPACE", "")
	t.Setenv("POD_NAME", "")
	t.Setenv(envCoreosNamespace, ns)
	t.Setenv(envCoreosPodName, "etcd-operator-6d8f7b9c4-x2x7q")
	return gates, restCfg, admin, asOperator
}

// startAsCoreos runs the operator as coreos' Deployment does (args after
// `etcd-operator`; the environment is the test's) until stop is called.
func startAsCoreos(t *testing.T, cfg *rest.Config, gates *kubecompat.Gates, kubelet *fakeKubelet, args ...string) (stop func()) {
	t.Helper()
	o, _, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	o.metricsAddr, o.probeAddr, o.dial, o.skipNameValidation = "0", "0", kubelet.dial, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, gates, o) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// apply creates every object of a YAML file, in namespace ns where namespaced.
func apply(t *testing.T, c client.Client, ns, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		switch obj.GetKind() {
		case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition":
		default:
			obj.SetNamespace(ns)
		}
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: creating %s %s: %v", file, obj.GetKind(), obj.GetName(), err)
		}
	}
}

func discoveryServes(cfg *rest.Config, groupVersion string) bool {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = dc.ServerResourcesForGroupVersion(groupVersion)
	return err == nil
}

func waitServed(t *testing.T, cfg *rest.Config) {
	t.Helper()
	waitFor(t, "EtcdClusters served", func() error {
		if !discoveryServes(cfg, etcdv1beta2.GroupVersion.String()) {
			return errors.New("not yet")
		}
		return nil
	})
}

func newCluster(ns, name string, size int) *etcdv1beta2.EtcdCluster {
	return &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       etcdv1beta2.EtcdClusterSpec{Size: size, Version: "3.5.21"},
	}
}

func scale(t *testing.T, c client.Client, ns, name string, size int) {
	t.Helper()
	cluster := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"size":%d}}`, size))
	if err := c.Patch(context.Background(), cluster, patch); err != nil {
		t.Fatal(err)
	}
}

// waitRunning waits until the operator reports the cluster Running with size
// ready members, its status up to date with the spec.
func waitRunning(t *testing.T, c client.Client, ns, name string, size int) *etcdv1beta2.EtcdCluster {
	t.Helper()
	got := &etcdv1beta2.EtcdCluster{}
	waitFor(t, fmt.Sprintf("cluster %s Running with %d members", name, size), func() error {
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, got); err != nil {
			return err
		}
		st := got.Status
		if st.Phase != etcdv1beta2.PhaseRunning || len(st.Members.Ready) != size || st.Size != size ||
			st.ObservedGeneration != got.Generation {
			return fmt.Errorf("generation %d, status %+v", got.Generation, st)
		}
		return nil
	})
	return got
}

// coreEvents checks that the operator recorded an Event with reason through
// core/v1 (events.k8s.io ones carry no source component).
func coreEvents(ctx context.Context, c client.Client, ns, reason string) error {
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.Reason == reason && e.Source.Component == "etcd-operator" && e.InvolvedObject.Kind == "EtcdCluster" {
			return nil
		}
	}
	return fmt.Errorf("no core/v1 Event %q among %d", reason, len(events.Items))
}

func dialMembers(t *testing.T, k *fakeKubelet, pods []corev1.Pod) etcdadmin.Admin {
	t.Helper()
	k.mu.Lock()
	var endpoints []string
	for _, p := range pods {
		endpoints = append(endpoints, "http://"+k.ips[p.Name]+":2379")
	}
	k.mu.Unlock()
	a, err := k.dial(endpoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// membersHealthy checks that etcd's membership has n started voting members.
func membersHealthy(ctx context.Context, a etcdadmin.Admin, n int) error {
	callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ms, err := a.Members(callCtx)
	if err != nil {
		return err
	}
	voters := 0
	for _, m := range ms {
		if !m.IsLearner && m.Name != "" {
			voters++
		}
	}
	if voters != n || len(ms) != n {
		return fmt.Errorf("membership %+v, want %d started voters", ms, n)
	}
	return nil
}
