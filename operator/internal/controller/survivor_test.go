package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/controller"
)

// TestOperatorCrashDuringRecoveryFromSurvivor kills the operator right after
// each write of a recovery from a survivor (the seeded pod created, the old
// cluster's pods deleted), starts a new one, and requires the cluster to come
// back to three members holding the key written before the loss: each step is
// decided from the pods as they are, not from what the dead operator knew.
func TestOperatorCrashDuringRecoveryFromSurvivor(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	const image = "etcdproof/etcd-operator:test"
	for _, call := range []string{"create Pod", "delete Pod"} {
		t.Run(call, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := newNamespace(t)
			runEtcdKubelet(t, ns)
			crash := &crashPoint{call: call}
			first := runReconciler(t, cfg, ns, &controller.Reconciler{Dial: crashingDial(crash), SeedImage: image},
				func(c client.Client) client.Client { return crashingClient{c, crash} })
			t.Cleanup(func() { _ = first.stop() })
			c := newCluster(ns, "crash", 3, "3.5.21")
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			waitConverged(t, c, 3, false)
			key := putKey(t, c)
			optIn(t, c)
			crash.arm(first.cancel)
			killPods(t, c, 2)
			waitFor(t, "the operator to crash right after "+call, func() error {
				if !crash.hasFired() {
					return fmt.Errorf("no %q call yet; calls so far: %v", call, crash.calls)
				}
				return nil
			})
			if err := first.stop(); err != nil {
				t.Fatalf("crashed manager: %v", err)
			}
			t.Logf("crashed after: %s", strings.Join(crash.calls, ", "))
			startReconciler(t, cfg, ns, &controller.Reconciler{SeedImage: image})
			waitConverged(t, c, 3, false)
			getKey(t, c, key)
		})
	}
}
