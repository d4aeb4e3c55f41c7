package controller_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// budgetKeeper plays the disruption controller of kube-controller-manager,
// which envtest does not run, for the PodDisruptionBudgets of one
// namespace: it writes their status from the pods they select (healthy:
// Ready, not terminating, and not evicted a moment ago), as that controller
// does, except that while held it allows no disruption at all, as during a
// drain that took the budget's last one. The API server's Eviction API reads
// that status, and records in status.disruptedPods each pod it lets go,
// which a plain delete never does: evicted keeps every such pod's name.
type budgetKeeper struct {
	held atomic.Bool

	mu      sync.Mutex
	evicted map[string]bool
}

// budgetKeepers holds the keeper of each namespace that has one.
var budgetKeepers sync.Map // namespace → *budgetKeeper

// runBudgetKeeper starts the keeper of namespace ns until the test ends,
// or returns the one that runs there: the test kubelets start one, as a
// cluster's kube-controller-manager runs beside its kubelets (without it
// the API server refuses every eviction: the budget "is still being
// processed").
func runBudgetKeeper(t *testing.T, ns string) *budgetKeeper {
	t.Helper()
	k := &budgetKeeper{evicted: map[string]bool{}}
	if running, loaded := budgetKeepers.LoadOrStore(ns, k); loaded {
		return running.(*budgetKeeper)
	}
	gvk := budgetGVK()                             // policy/v1, or policy/v1beta1 before Kubernetes 1.21: the same fields
	t.Cleanup(func() { budgetKeepers.Delete(ns) }) // after the loop below has stopped
	untilTestEnds(t, func(ctx context.Context) {
		var budgets unstructured.UnstructuredList
		budgets.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(ctx, &budgets, client.InNamespace(ns)); err != nil {
			return
		}
		for _, item := range budgets.Items {
			var pdb policyv1.PodDisruptionBudget
			if runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &pdb) != nil {
				continue
			}
			want, changed := k.status(ctx, &pdb)
			if !changed {
				continue
			}
			raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
			if err != nil {
				continue
			}
			out := &unstructured.Unstructured{Object: raw}
			out.SetGroupVersionKind(gvk)
			_ = k8s.Status().Update(ctx, out) // a conflict with an eviction: next round
		}
	})
	return k
}

// status is pdb with the status the disruption controller would write, and
// whether that differs from the one it has.
func (k *budgetKeeper) status(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, bool) {
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || pdb.Spec.MinAvailable == nil {
		return nil, false
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(pdb.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, false
	}
	// An eviction of a pod whose name a newer pod has (a member restarted
	// on its claim) was of the pod before: the disruption controller saw
	// that one go (it watches), which a poll may miss. Both times are in
	// whole seconds: one in the second the pod was made is the one before.
	live := map[string]time.Time{}
	healthy := int32(0)
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		live[p.Name] = p.CreationTimestamp.Time
		at, disrupted := pdb.Status.DisruptedPods[p.Name]
		if podReady(&p) && (!disrupted || !at.Time.After(p.CreationTimestamp.Time)) {
			healthy++
		}
	}
	want := pdb.DeepCopy()
	want.Status.DisruptedPods = nil
	k.mu.Lock()
	for name, at := range pdb.Status.DisruptedPods {
		k.evicted[name] = true
		if created, ok := live[name]; ok && at.Time.After(created) {
			if want.Status.DisruptedPods == nil {
				want.Status.DisruptedPods = map[string]metav1.Time{}
			}
			want.Status.DisruptedPods[name] = at
		}
	}
	k.mu.Unlock()
	desired := pdb.Spec.MinAvailable.IntVal
	allowed := max(0, healthy-desired)
	if k.held.Load() {
		allowed = 0
	}
	want.Status.ObservedGeneration = pdb.Generation
	want.Status.ExpectedPods = int32(len(pods.Items))
	want.Status.CurrentHealthy, want.Status.DesiredHealthy, want.Status.DisruptionsAllowed = healthy, desired, allowed
	return want, !equality.Semantic.DeepEqual(want.Status, pdb.Status)
}

func (k *budgetKeeper) wasEvicted(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.evicted[name]
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
