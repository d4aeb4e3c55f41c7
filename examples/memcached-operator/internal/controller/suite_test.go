package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
)

// testImage is the memcached image the operator under test is told to run.
const testImage = "etcdproof/memcached:test"

// The API server and etcd of the integration tests (envtest: no controller
// manager, so no Deployment controller, kubelet or garbage collector), shared
// by the tests of the package; nil when KUBEBUILDER_ASSETS is not set.
var (
	testEnv  *envtest.Environment
	adminCfg *rest.Config
	scheme   = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := cachev1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		testEnv = &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
			ErrorIfCRDPathMissing: true,
		}
		var err error
		if adminCfg, err = testEnv.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "starting the API server:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if testEnv != nil {
		_ = testEnv.Stop()
	}
	os.Exit(code)
}

// adminClient is a client with every right, standing for the user and for
// the controllers envtest does not run; it skips the test without an API
// server.
func adminClient(t *testing.T) client.Client {
	t.Helper()
	if testEnv == nil {
		t.Skip("KUBEBUILDER_ASSETS is not set; run `make test`")
	}
	c, err := client.New(adminCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startOperator runs the controller in a new namespace, which it returns,
// as OLM runs it in OwnNamespace mode: watching that namespace only, as a
// user granted nothing but the generated Role there (config/rbac/role.yaml),
// so a rule missing from the RBAC markers fails the test.
func startOperator(t *testing.T, admin client.Client) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "memcached-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatal(err)
	}
	role.Namespace = ns.Name
	user := "memcached-operator-" + ns.Name
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{&role, binding} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	operator, err := testEnv.AddUser(envtest.User{Name: user}, adminCfg)
	if err != nil {
		t.Fatal(err)
	}

	mgr, err := ctrl.NewManager(operator.Config(), ctrl.Options{
		Scheme:                 scheme,
		Logger:                 testr.New(t),
		Cache:                  CacheOptions([]string{ns.Name}),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Each test starts a controller of the same name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&MemcachedReconciler{Client: mgr.GetClient(), Image: testImage}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	return ns.Name
}

// eventually polls check until it returns nil, and fails the test with its
// last error after 30 seconds.
func eventually(t *testing.T, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			last = check(ctx)
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}
