package controller

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

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
