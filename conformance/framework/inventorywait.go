package framework

import (
	"context"
	"time"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best dot-imported.

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/inventory"
)

// WaitForNamespaceProvisioned waits until Kubernetes has put in a new
// namespace what it puts in every namespace of this cluster: the default
// ServiceAccount (with its token Secret where the cluster still makes
// them) and the kube-root-ca.crt ConfigMap (where the cluster publishes
// it), judged from the default namespace. An inventory of the namespace
// taken earlier would count them as the operator's later.
func (e *Env) WaitForNamespaceProvisioned(ctx context.Context, namespace string, intervals ...any) {
	core := e.Kube.CoreV1()
	ref, err := core.ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "read the default namespace's ServiceAccount")
	wantToken := len(ref.Secrets) > 0
	_, err = core.ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	wantCA := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		Expect(err).NotTo(HaveOccurred(), "read the default namespace's kube-root-ca.crt")
	}
	Eventually(ctx, func(g Gomega) {
		sa, err := core.ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred(), "namespace %s has no default ServiceAccount yet", namespace)
		if wantToken {
			g.Expect(sa.Secrets).NotTo(BeEmpty(), "namespace %s: the default ServiceAccount has no token Secret yet", namespace)
		}
		if wantCA {
			_, err := core.ConfigMaps(namespace).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "namespace %s has no kube-root-ca.crt yet", namespace)
		}
	}).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(Succeed())
}

// WaitForCleanInventoryInput is what WaitForCleanInventory polls.
type WaitForCleanInventoryInput struct {
	// Take snapshots what is judged (a namespace, the cluster).
	Take func(context.Context) (inventory.Snapshot, error)
	// Judge judges a snapshot.
	Judge func(inventory.Snapshot) inventory.Verdict
	// Saved, when set, gets every verdict, so the last one is kept.
	Saved func(inventory.Verdict)
}

// WaitForCleanInventory polls until the verdict is clean (nothing left,
// everything listed and attributed: garbage collection and finalizers take
// a while) or the time is up, and returns the last verdict without
// asserting anything: the spec tells a failure from an unjudged check. The
// error is the last snapshot's, when it could not be taken.
func WaitForCleanInventory(ctx context.Context, in WaitForCleanInventoryInput, intervals ...any) (inventory.Verdict, error) {
	defer waitProgress("nothing to be left behind", intervals)()
	var last inventory.Verdict
	var lastErr error
	poll := func() bool {
		snap, err := in.Take(ctx)
		if lastErr = err; err != nil {
			return false
		}
		last = in.Judge(snap)
		if in.Saved != nil {
			in.Saved(last)
		}
		return last.Clean()
	}
	// A Gomega that records instead of failing: running out of time is a
	// verdict here, not an error.
	g := NewGomega(func(string, ...int) {})
	g.Eventually(ctx, poll).WithTimeout(intervals[0].(time.Duration)).WithPolling(intervals[1].(time.Duration)).Should(BeTrue())
	return last, lastErr
}
