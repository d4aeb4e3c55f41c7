package controller_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// TestEvenSizeIsWarnedAbout: an even spec.size buys no fault tolerance over
// the odd size below it (4 members survive the loss of 1, as 3 do) and makes
// a split vote likelier, so the operator says so with a Warning Event. An
// odd size gets none.
func TestEvenSizeIsWarnedAbout(t *testing.T) {
	needAPIServer(t)
	if !eventsRecorded(t) {
		t.Skip("no Events recorded on this API server")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	for _, c := range []struct {
		name string
		size int
	}{{"even", 4}, {"odd", 3}} {
		if err := k8s.Create(ctx, newCluster(ns, c.name, c.size, "3.5.21")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a Warning Event about the even size", func() error {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == conditions.EventEvenSize && e.InvolvedObject.Name == "even" && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("%d events, none %q for cluster even", len(events.Items), conditions.EventEvenSize)
	})
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == conditions.EventEvenSize && e.InvolvedObject.Name == "odd" {
			t.Errorf("the odd-sized cluster was warned about: %s", e.Message)
		}
	}
}
