package controller

import (
	"errors"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestEvictionVersion reads the Eviction API's version as the API server's
// discovery of core/v1 lists it (kubectl drain reads the same).
func TestEvictionVersion(t *testing.T) {
	pods := metav1.APIResource{Name: "pods", Kind: "Pod", Namespaced: true}
	eviction := func(version string) metav1.APIResource {
		return metav1.APIResource{Name: "pods/eviction", Group: "policy", Version: version, Kind: "Eviction", Namespaced: true}
	}
	for _, tt := range []struct {
		name      string
		resources []metav1.APIResource
		want      string
	}{
		{"Kubernetes 1.22 and later", []metav1.APIResource{pods, eviction("v1")}, "v1"},
		{"Kubernetes 1.16", []metav1.APIResource{pods, eviction("v1beta1")}, "v1beta1"},
		{"no Eviction API: pods are deleted", []metav1.APIResource{pods}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := evictionVersion(&metav1.APIResourceList{GroupVersion: "v1", APIResources: tt.resources}); got != tt.want {
				t.Fatalf("evictionVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRefusedByBudget tells the budget's refusals of an eviction (the
// operator waits) from the grant's (it deletes instead).
func TestRefusedByBudget(t *testing.T) {
	budget := schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"no disruption allowed (429)", apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0), true},
		{"budget status off (Forbidden, naming the budget)", apierrors.NewForbidden(budget, "example", errors.New("pdb disruptions allowed is negative")), true},
		{"the grant lacks pods/eviction", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "example-a", errors.New("cannot create resource \"pods/eviction\"")), false},
		{"anything else", errors.New("connection refused"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := refusedByBudget(tt.err); got != tt.want {
				t.Fatalf("refusedByBudget(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestBudgetNotCounted tells a budget the disruption controller has not
// counted yet (retried within a second, no Event) from one that allows no
// disruption.
func TestBudgetNotCounted(t *testing.T) {
	refusal := func(cause string) error {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
		return err
	}
	if !budgetNotCounted(refusal("The disruption budget quorum is still being processed by the server.")) {
		t.Error("a budget not processed yet is not told apart")
	}
	if budgetNotCounted(refusal("The disruption budget quorum needs 3 healthy pods and has 3 currently")) {
		t.Error("a budget that allows no disruption is taken for one not processed yet")
	}
}
