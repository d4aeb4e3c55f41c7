package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
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

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
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
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(etcdv1beta2.AddToScheme(scheme))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Exit(m.Run())
	}
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "manifests", "crd")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	cfg, err = env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating client:", err)
		os.Exit(1)
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
	if dial == nil {
		dial = etcdadmin.Dial
	}
	r := &controller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("etcd-operator"), Dial: dial, Options: opts}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// waitFor polls check until it returns nil; it fails the test with the last
// error if that takes longer than a minute.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) {
			last = check()
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}
