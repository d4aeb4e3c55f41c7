package kubecompat

import (
	"context"
	"os"
	"testing"
	"time"

	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startAPIServer starts a real API server (the one KUBEBUILDER_ASSETS holds).
func startAPIServer(t *testing.T) (*rest.Config, *Access) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set; run `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	access, err := NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, access
}

// Every API server the tests run on (1.16 and later) serves v1 Leases: the
// manager's own lock is kept there.
func TestLeaseLockForKeepsClientGoLockWhereV1Served(t *testing.T) {
	cfg, access := startAPIServer(t)
	lock, why, err := access.LeaseLockFor(cfg, "default", "etcd-operator")
	if err != nil || why != "" || lock != nil {
		t.Fatalf("LeaseLockFor = %v, %q, %v; want the manager's own lock (nil)", lock, why, err)
	}
}

// Two replicas holding LeaseV1Beta1Locks: one leads (and an Event says so),
// the other waits while the leader renews, and takes over once the leader
// hands the Lease over.
// Needs an API server serving v1beta1 Leases (1.12–1.21: `make test` runs
// this package on TEST_OLD_K8S).
func TestLeaseV1Beta1LockElectsOneLeaderAtATime(t *testing.T) {
	cfg, access := startAPIServer(t)
	served, err := access.ServesResource(coordinationv1beta1.SchemeGroupVersion.String(), "leases")
	if err != nil {
		t.Fatal(err)
	}
	if !served {
		t.Skip("this API server serves no coordination.k8s.io/v1beta1 Leases (removed in 1.22)")
	}
	const ns, name = "default", "etcd-operator.etcd.database.coreos.com"
	// elect starts a replica; stop makes it hand the Lease over and waits.
	elect := func() (elector *leaderelection.LeaderElector, lock *LeaseV1Beta1Lock, stop func()) {
		lock, err := NewLeaseV1Beta1Lock(cfg, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   3 * time.Second,
			RenewDeadline:   2 * time.Second,
			RetryPeriod:     200 * time.Millisecond,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); elector.Run(ctx) }()
		stop = func() { cancel(); <-done }
		t.Cleanup(stop) // before the API server stops
		return elector, lock, stop
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil })
		if err != nil {
			t.Fatalf("waiting until %s: %v", what, err)
		}
	}

	first, firstLock, stopFirst := elect()
	waitUntil("the first replica leads", first.IsLeader)
	// An Event on the Lease says so, as client-go's own lock records it.
	waitUntil("the first replica's LeaderElection Event is recorded", func() bool {
		events, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, ev := range events.Items {
			if ev.Reason == "LeaderElection" && ev.InvolvedObject.Kind == "Lease" && ev.InvolvedObject.Name == name &&
				ev.Message == firstLock.Identity()+" became leader" {
				return true
			}
		}
		return false
	})

	second, secondLock, _ := elect()
	waitUntil("the second replica has read the first's Lease", func() bool { return second.GetLeader() == firstLock.Identity() })
	// While the first keeps renewing, the second follows.
	renewed := leaseRenewTime(t, cfg, ns, name)
	waitUntil("the first replica renewed its Lease", func() bool { return leaseRenewTime(t, cfg, ns, name).After(renewed) })
	if second.IsLeader() {
		t.Fatal("two replicas lead at once")
	}

	stopFirst()
	waitUntil("the second replica leads after the first handed over", second.IsLeader)
	lease, err := kubernetes.NewForConfigOrDie(cfg).CoordinationV1beta1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *lease.Spec.HolderIdentity; got != secondLock.Identity() {
		t.Errorf("Lease held by %q, want the second replica %q", got, secondLock.Identity())
	}
	if got := *lease.Spec.LeaseTransitions; got != 1 {
		t.Errorf("Lease transitions = %d, want 1", got)
	}
}

func leaseRenewTime(t *testing.T, cfg *rest.Config, ns, name string) time.Time {
	t.Helper()
	lease, err := kubernetes.NewForConfigOrDie(cfg).CoordinationV1beta1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || lease.Spec.RenewTime == nil {
		t.Fatalf("reading the Lease: %v", err)
	}
	return lease.Spec.RenewTime.Time
}
