package specs

import (
	"context"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/inventory"
)

// runState is the state of one run that outlives its checks, owned by
// Register: its setup and teardown write it, and each check gets what it
// needs of it through its input. No check writes what another reads.
type runState struct {
	get func() *Suite
	// started bounds the audit log the rbac and cleanup checks read.
	started time.Time
	// before is the inventory taken before the operator was installed.
	before inventory.Snapshot

	mu sync.Mutex
	// namespaces are those the run created for its clusters.
	namespaces []string
	// uninstalled is set once the profile's uninstall steps succeeded, so
	// that the operator is uninstalled once, by whoever asks first.
	uninstalled bool
}

// setUp takes the inventory before install, installs the operator and
// starts sampling its memory (the suite's BeforeAll).
func (r *runState) setUp(ctx context.Context) {
	s := r.get()
	r.started = time.Now()
	// Until the operator is up, a failure means the run could not be done.
	s.SetupFailed = true
	e := s.Env
	By("taking the inventory before install")
	snap, err := inventory.Take(ctx, e.Disc, e.Dynamic)
	Expect(err).NotTo(HaveOccurred())
	r.before = snap
	By("installing operator profile " + e.Profile.Name)
	Expect(e.RunSteps(ctx, e.Profile.Install)).To(Succeed())
	e.WaitForOperatorReady(ctx, e.Config.GetIntervals("install", "operator-ready")...)
	s.SetupFailed = false
	if e.Profile.Operator.Deployment != "" {
		s.memory = e.StartMemorySampler(e.Config.Polling("default", "operator-memory"), e.Config.Timeout("default", "operator-memory"))
	}
}

// tearDown stops the memory sampling and uninstalls the operator unless
// it is uninstalled already or --skip-cleanup keeps it (the suite's
// AfterAll).
func (r *runState) tearDown(ctx context.Context) {
	s := r.get()
	s.StopMemorySampler()
	if s.Env.Opts.SkipCleanup || r.isUninstalled() {
		return
	}
	By("uninstalling the operator")
	if err := r.uninstall(ctx); err != nil {
		GinkgoWriter.Printf("uninstall failed: %v\n", err)
	}
}

// uninstall stops sampling the operator's memory and runs the profile's
// uninstall steps. Once they succeeded it does nothing: the cleanup check
// and the teardown may both ask for it.
func (r *runState) uninstall(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.uninstalled {
		return nil
	}
	s := r.get()
	s.StopMemorySampler()
	if err := s.Env.RunSteps(ctx, s.Env.Profile.Uninstall); err != nil {
		return err
	}
	r.uninstalled = true
	return nil
}

func (r *runState) isUninstalled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.uninstalled
}

// CreateNamespace creates a namespace for a check's cluster and keeps its
// name for the cleanup check.
func (r *runState) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns, err := r.get().Env.CreateNamespace(ctx, prefix)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.namespaces = append(r.namespaces, ns)
	return ns, nil
}

// CreatedNamespaces are the namespaces created so far for the checks' clusters.
func (r *runState) CreatedNamespaces() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.namespaces)
}
