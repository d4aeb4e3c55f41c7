package controller

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// TestRefusedWritesShowInTheAuthorizedCondition: a refused write is kept,
// not returned, and shows in Authorized until the same kind of write works;
// clusters that never had a refusal get no Authorized condition.
func TestRefusedWritesShowInTheAuthorizedCondition(t *testing.T) {
	ctx := context.Background()
	r := &Reconciler{}
	key := types.NamespacedName{Namespace: "ns", Name: "c"}
	c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: 1},
		Spec: etcdv1beta2.EtcdClusterSpec{Size: 3, Version: "3.6.5"}}
	obs := &observation{Observed: plan.Observed{Size: 3, Version: "3.6.5"}}
	authorized := func() *metav1.Condition {
		st := computeStatus(c, obs, plan.Action{Kind: plan.Wait}, r.refused.list(key))
		c.Status = *st
		return meta.FindStatusCondition(st.Conditions, conditions.Authorized)
	}

	if cond := authorized(); cond != nil {
		t.Fatalf("Authorized set without a refusal: %+v", cond)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "c", errors.New("no grant"))
	if err := r.settle(ctx, key, writeServices, forbidden); err != nil {
		t.Fatalf("a refused write failed the pass: %v", err)
	}
	if cond := authorized(); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != conditions.ReasonWriteForbidden {
		t.Fatalf("after a refusal: %+v", cond)
	}
	if err := r.settle(ctx, key, writeServices, nil); err != nil {
		t.Fatal(err)
	}
	if cond := authorized(); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("after the write worked: %+v", cond)
	}
	other := errors.New("connection refused")
	if err := r.settle(ctx, key, writeServices, other); !errors.Is(err, other) {
		t.Fatalf("an error other than a refusal was swallowed: %v", err)
	}
}

func TestRecordOwnWriteMovesOnlyTheCurrentGeneration(t *testing.T) {
	st := etcdv1beta2.EtcdClusterStatus{ObservedGeneration: 4, Conditions: []metav1.Condition{
		{Type: "A", ObservedGeneration: 4}, {Type: "B", ObservedGeneration: 2},
	}}
	recordOwnWrite(&st, 4)
	if st.ObservedGeneration != 5 || st.Conditions[0].ObservedGeneration != 5 || st.Conditions[1].ObservedGeneration != 2 {
		t.Errorf("status after recordOwnWrite: %+v", st)
	}
}

// TestStatusOfADeletedClusterIsNotWrittenThroughTheObject reproduces what
// the e2e rbac check caught: a status write that raced the EtcdCluster's
// deletion got NotFound, which writeStatus took for a CRD without the status
// subresource, and it patched the object instead (a verb the generated Role
// does not grant). A NotFound for a cluster that is gone writes nothing; one
// for a cluster that exists still goes through the object.
func TestStatusOfADeletedClusterIsNotWrittenThroughTheObject(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := etcdv1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	want := &etcdv1beta2.EtcdClusterStatus{Phase: etcdv1beta2.PhaseRunning}
	for _, tt := range []struct {
		name      string
		exists    bool
		wantPatch bool
		viaObject bool
	}{
		{name: "deleted since the pass read it", exists: false, wantPatch: false, viaObject: false},
		{name: "a CRD without the status subresource", exists: true, wantPatch: true, viaObject: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &etcdv1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: 1}}
			b := fake.NewClientBuilder().WithScheme(scheme) // no status subresource: Status().Update is NotFound
			if tt.exists {
				b = b.WithObjects(c.DeepCopy())
			}
			patched := false
			cl := interceptor.NewClient(b.Build(), interceptor.Funcs{
				Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patched = true
					return cl.Patch(ctx, obj, patch, opts...)
				},
			})
			r := &Reconciler{Client: cl, APIReader: cl}
			if tt.exists {
				if err := cl.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.writeStatus(ctx, c, want); err != nil {
				t.Fatalf("writeStatus: %v", err)
			}
			if patched != tt.wantPatch || r.statusViaObject.Load() != tt.viaObject {
				t.Fatalf("patched %v, status via the object %v; want %v, %v", patched, r.statusViaObject.Load(), tt.wantPatch, tt.viaObject)
			}
		})
	}
}
