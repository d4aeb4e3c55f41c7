package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/etcdproof/etcdproof/internal/testparallel"
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

var (
	cfg    *rest.Config
	scheme = runtime.NewScheme()
	// k8s is a direct (uncached) client for assertions.
	k8s client.Client
)

// TestMain starts a real kube-apiserver and etcd (envtest) with the generated
// CRD installed. Without KUBEBUILDER_ASSETS (use `make test`) the tests skip.
func TestMain(m *testing.M) {
	// Tests on the API server mostly wait on etcd and the reconciler: run
	// more of them at once than a small machine has cores (needAPIServer).
	testparallel.Default(8)
	gates := kubecompat.Install() // as the operator binary does
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(etcdv1beta2.AddToScheme(scheme))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Exit(m.Run())
	}
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	env := &envtest.Environment{}
	if os.Getenv("ETCDPROOF_TEST_APISERVER_LOG") != "" {
		env.ControlPlane.GetAPIServer().Out = os.Stderr
		env.ControlPlane.GetAPIServer().Err = os.Stderr
	}
	if !legacyCRD() {
		env.CRDDirectoryPaths = []string{filepath.Join("..", "..", "..", "manifests", "crd")}
		env.ErrorIfCRDPathMissing = true
	}
	var err error
	cfg, err = env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	if _, _, err := gates.AdaptTo(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating client:", err)
		os.Exit(1)
	}
	if legacyCRD() {
		if err := installLegacyCRD(filepath.Join("..", "..", "..", "manifests", "crd-v1beta1", "etcd.database.coreos.com_etcdclusters.yaml")); err != nil {
			fmt.Fprintln(os.Stderr, "installing the v1beta1 CRD:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

func needAPIServer(t *testing.T) {
	t.Helper()
	if cfg == nil {
		t.Skip("KUBEBUILDER_ASSETS is not set; run `make test`")
	}
	// Every test on the API server works in namespaces of its own, with its
	// own manager and its own members on loopback addresses of their own,
	// and most of its time is spent waiting on etcd and the reconciler: run
	// them side by side (TestMain raises -parallel).
	t.Parallel()
}

// currentEraOnly skips a test on make test's old-era leg: tests of the
// operator's membership logic on real etcd members, which no API server
// version changes, run once, on the current leg.
func currentEraOnly(t *testing.T) {
	t.Helper()
	if legacyCRD() {
		t.Skip("membership logic on real members: run on the current Kubernetes leg only")
	}
}

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "etcd-test-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// startOperator runs the reconciler in a manager watching namespace, like the
// operator binary does, until the test ends.
func startOperator(t *testing.T, namespace string, dial etcdadmin.Dialer) {
	t.Helper()
	startOperatorAs(t, cfg, namespace, dial, plan.Options{})
}

// startOperatorAs is startOperator with the given credentials and options;
// edits change the manager's options (leader election, say).
func startOperatorAs(t *testing.T, restCfg *rest.Config, namespace string, dial etcdadmin.Dialer, opts plan.Options, edits ...func(*ctrl.Options)) {
	t.Helper()
	startReconciler(t, restCfg, namespace, &controller.Reconciler{Dial: dial, Options: opts}, edits...)
}

// startReconciler runs r in a manager until the test ends; r gets the
// manager's client (and recorder), and etcdadmin.Dial when it has no Dial.
func startReconciler(t *testing.T, restCfg *rest.Config, namespace string, r *controller.Reconciler, edits ...func(*ctrl.Options)) {
	t.Helper()
	m := runReconciler(t, restCfg, namespace, r, nil, edits...)
	t.Cleanup(func() {
		if err := m.stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// runningManager is a started manager: an operator process, for tests that
// stop it (or crash it) before the test ends.
type runningManager struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// stop ends the manager (if it has not ended) and waits for it.
func (m *runningManager) stop() error {
	m.once.Do(func() {
		m.cancel()
		m.err = <-m.done
	})
	return m.err
}

// runReconciler is startReconciler, returning the running manager; wrap,
// when set, wraps the manager's client for r (fault injection).
func runReconciler(t *testing.T, restCfg *rest.Config, namespace string, r *controller.Reconciler,
	wrap func(client.Client) client.Client, edits ...func(*ctrl.Options)) *runningManager {
	t.Helper()
	mgrOpts := ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every test starts its own manager with the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, edit := range edits {
		edit(&mgrOpts)
	}
	mgr, err := ctrl.NewManager(restCfg, mgrOpts)
	if err != nil {
		t.Fatal(err)
	}
	r.Client = mgr.GetClient()
	if wrap != nil {
		r.Client = wrap(r.Client)
	}
	if r.Dial == nil {
		r.Dial = etcdadmin.Dial
	}
	// Like the operator binary: Events only where events.k8s.io/v1 is served.
	if served(eventsv1.SchemeGroupVersion.String()) {
		r.Recorder = mgr.GetEventRecorder("etcd-operator")
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &runningManager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m
}

// waitFor polls check until it returns nil; it fails the test with the last
// error if that takes longer than a minute.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	waitForLong(t, what, time.Minute, check)
}

// waitForLong is waitFor with its own limit.
func waitForLong(t *testing.T, what string, limit time.Duration, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, limit, true,
		func(context.Context) (bool, error) {
			last = check()
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

// legacyCRD: with ETCDPROOF_TEST_CRDS=legacy the control plane gets the
// apiextensions v1beta1 CRD that old clusters need instead of the v1 one
// (make test's old-era leg runs the tests so on the oldest API server built
// here). envtest installs only v1 CRDs, hence installLegacyCRD.
func legacyCRD() bool { return os.Getenv("ETCDPROOF_TEST_CRDS") == "legacy" }

// installLegacyCRD creates a v1beta1 CRD file as it is and waits until its
// resource is served.
func installLegacyCRD(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		return err
	}
	ctx := context.Background()
	if err := k8s.Create(ctx, crd); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := dc.ServerResourcesForGroupVersion(etcdv1beta2.GroupVersion.String())
		return err == nil, nil
	})
}

// served reports whether the test API server serves groupVersion.
func served(groupVersion string) bool {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = dc.ServerResourcesForGroupVersion(groupVersion)
	return err == nil
}

// eventsRecorded says whether the operator records Events on this API
// server (events.k8s.io/v1, Kubernetes 1.19+); tests assert Events only then.
func eventsRecorded(t *testing.T) bool {
	t.Helper()
	if served(eventsv1.SchemeGroupVersion.String()) {
		return true
	}
	t.Log("events.k8s.io/v1 is not served (Kubernetes < 1.19): the operator records no Events, so none are asserted")
	return false
}

// celRules says whether the API server enforces the CRD's CEL rules
// (x-kubernetes-validations, on by default from Kubernetes 1.25). Older
// servers drop them and enforce only the plain OpenAPI checks.
func celRules(t *testing.T) bool {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	minor, _ := strconv.Atoi(strings.TrimRight(v.Minor, "+"))
	return v.Major != "1" || minor >= 25
}
