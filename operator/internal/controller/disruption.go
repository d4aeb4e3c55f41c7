package controller

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// disruptionBudgetKind is the PodDisruptionBudget type the API server
// serves: policy/v1 from Kubernetes 1.21, policy/v1beta1 before (and until
// 1.25). Asked once, at start, through the manager's discovery-backed mapper.
func disruptionBudgetKind(mapper meta.RESTMapper) (client.Object, error) {
	gk := schema.GroupKind{Group: policyv1.GroupName, Kind: "PodDisruptionBudget"}
	_, err := mapper.RESTMapping(gk, policyv1.SchemeGroupVersion.Version)
	if err == nil {
		return &policyv1.PodDisruptionBudget{}, nil
	}
	if !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("discovering policy/v1: %w", err)
	}
	if _, err := mapper.RESTMapping(gk, policyv1beta1.SchemeGroupVersion.Version); err != nil {
		return nil, fmt.Errorf("the API server serves PodDisruptionBudgets in neither policy/v1 nor policy/v1beta1: %w", err)
	}
	return &policyv1beta1.PodDisruptionBudget{}, nil
}

// ensureDisruptionBudget creates the cluster's PodDisruptionBudget when
// missing and puts its spec back when it differs, counted from the voters
// etcd lists (obs). While no member answers it is counted from the voters
// it was last counted from (desired.AnnotationBudgetVoters), else from
// spec.size. A budget of that name the cluster does not control is left as
// it is, as pre-created Services are.
func (r *Reconciler) ensureDisruptionBudget(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation) error {
	voters := 0
	if obs.MembershipKnown {
		voters = plan.Voters(obs.Members)
	}
	var existing client.Object = &policyv1.PodDisruptionBudget{}
	v1beta1 := false
	if _, v1beta1 = r.disruptionBudget.(*policyv1beta1.PodDisruptionBudget); v1beta1 {
		existing = &policyv1beta1.PodDisruptionBudget{}
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: desired.DisruptionBudgetName(c.Name)}, existing)
	if voters == 0 && err == nil {
		voters = desired.BudgetVoters(existing.GetAnnotations())
	}
	var want client.Object = desired.DisruptionBudget(c, voters)
	if v1beta1 {
		want = desired.DisruptionBudgetV1beta1(c, voters)
	}
	if r.Options.BudgetFromSize {
		unsafeBudgetFromSize(want) // UNSAFE, self-test only
	}
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PodDisruptionBudget %s: %w", want.GetName(), err)
		}
		obs.budgetWritten = true
		return nil
	case err != nil:
		return fmt.Errorf("reading PodDisruptionBudget %s: %w", want.GetName(), err)
	case !metav1.IsControlledBy(existing, c) || !setBudgetSpec(existing, want):
		return nil
	}
	if err := r.Client.Update(ctx, existing); err != nil {
		return fmt.Errorf("updating PodDisruptionBudget %s: %w", want.GetName(), err)
	}
	obs.budgetWritten = true
	return nil
}

// budgetCounted: the disruption controller has counted the latest spec of
// the cluster's PodDisruptionBudget (or there is none of the operator's to
// count). Until it has, the API server refuses evictions with a Retry-After
// of 10 s, which client-go waits out inside the call, holding a worker; a
// budget just changed for a voter added or removed is the usual case, at
// every step of a roll or a scale-down. The cache may lag the budget this
// pass wrote, hence budgetWritten.
func (r *Reconciler) budgetCounted(ctx context.Context, c *etcdv1beta2.EtcdCluster, obs *observation) bool {
	if r.WithoutDisruptionBudget != "" {
		return true
	}
	if obs.budgetWritten {
		return false
	}
	budget, ok := r.disruptionBudget.DeepCopyObject().(client.Object)
	if !ok || r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: desired.DisruptionBudgetName(c.Name)}, budget) != nil {
		return true // none, or unreadable: the eviction itself says
	}
	switch b := budget.(type) {
	case *policyv1.PodDisruptionBudget:
		return b.Status.ObservedGeneration >= b.Generation
	case *policyv1beta1.PodDisruptionBudget:
		return b.Status.ObservedGeneration >= b.Generation
	}
	return true
}

// setBudgetSpec copies the fields the operator sets from want into existing
// and reports whether that changed anything.
func setBudgetSpec(existing, want client.Object) bool {
	annotated := existing.GetAnnotations()[desired.AnnotationBudgetVoters] == want.GetAnnotations()[desired.AnnotationBudgetVoters]
	if !annotated {
		annotations := existing.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[desired.AnnotationBudgetVoters] = want.GetAnnotations()[desired.AnnotationBudgetVoters]
		existing.SetAnnotations(annotations)
	}
	return setBudgetFields(existing, want) || !annotated
}

// setBudgetFields copies the spec fields the operator sets from want into
// existing and reports whether that changed anything.
func setBudgetFields(existing, want client.Object) bool {
	switch e := existing.(type) {
	case *policyv1.PodDisruptionBudget:
		w := want.(*policyv1.PodDisruptionBudget)
		if equality.Semantic.DeepEqual(e.Spec.MaxUnavailable, w.Spec.MaxUnavailable) &&
			equality.Semantic.DeepEqual(e.Spec.MinAvailable, w.Spec.MinAvailable) &&
			equality.Semantic.DeepEqual(e.Spec.Selector, w.Spec.Selector) {
			return false
		}
		e.Spec.MaxUnavailable, e.Spec.MinAvailable, e.Spec.Selector = w.Spec.MaxUnavailable, w.Spec.MinAvailable, w.Spec.Selector
	case *policyv1beta1.PodDisruptionBudget:
		w := want.(*policyv1beta1.PodDisruptionBudget)
		if equality.Semantic.DeepEqual(e.Spec.MaxUnavailable, w.Spec.MaxUnavailable) &&
			equality.Semantic.DeepEqual(e.Spec.MinAvailable, w.Spec.MinAvailable) &&
			equality.Semantic.DeepEqual(e.Spec.Selector, w.Spec.Selector) {
			return false
		}
		e.Spec.MaxUnavailable, e.Spec.MinAvailable, e.Spec.Selector = w.Spec.MaxUnavailable, w.Spec.MinAvailable, w.Spec.Selector
	default:
		return false
	}
	return true
}

// unsafeBudgetFromSize turns budget into the one this operator made before:
// maxUnavailable 1, which Kubernetes counts against spec.size (the scale
// subresource), not against the voters etcd lists (Options.BudgetFromSize).
func unsafeBudgetFromSize(budget client.Object) {
	one := intstr.FromInt32(1)
	switch b := budget.(type) {
	case *policyv1.PodDisruptionBudget:
		b.Spec.MinAvailable, b.Spec.MaxUnavailable = nil, &one
	case *policyv1beta1.PodDisruptionBudget:
		b.Spec.MinAvailable, b.Spec.MaxUnavailable = nil, &one
	}
}
