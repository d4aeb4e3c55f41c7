package controller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
)

// TestOwnStopsWaitForTheDisruptionBudget: the operator's own stops of a
// healthy voter (on emptyDir a roll stops the outdated member once its
// replacement votes; on claims it restarts the member in place) go through
// the Eviction API, so that the PodDisruptionBudget counts them together
// with a concurrent drain's: while the budget allows no disruption the roll
// waits, with an Event saying why, and it goes on once the budget allows
// one, every member pod stopped through the budget. Before, the operator
// deleted the pod whatever the budget said, and a drain that had just
// evicted another voter left two of four (or one of three) running.
func TestOwnStopsWaitForTheDisruptionBudget(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	for _, volumes := range []bool{false, true} {
		t.Run(map[bool]string{false: "emptyDir", true: "claims"}[volumes], func(t *testing.T) {
			ctx := context.Background()
			c := runningOnEtcdKubelet(t, 3, volumes)
			budget := runBudgetKeeper(t, c.Namespace)
			budget.held.Store(true)
			pods, err := memberPods(ctx, c.Namespace, c.Name)
			if err != nil {
				t.Fatal(err)
			}
			original := map[types.UID]string{}
			for _, p := range pods {
				original[p.UID] = p.Name
			}
			env := corev1.EnvVar{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "4294967296"}
			patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) {
				if c.Spec.Pod == nil {
					c.Spec.Pod = &etcdv1beta2.PodPolicy{}
				}
				c.Spec.Pod.EtcdEnv = []corev1.EnvVar{env}
			})

			// Whichever comes first: an Event saying the budget holds the
			// stop, or a member pod stopped anyway.
			stopped := func() ([]string, error) {
				pods, err := memberPods(ctx, c.Namespace, c.Name)
				if err != nil {
					return nil, err
				}
				left := map[types.UID]bool{}
				for _, p := range pods {
					if p.DeletionTimestamp == nil {
						left[p.UID] = true
					}
				}
				var gone []string
				for uid, name := range original {
					if !left[uid] {
						gone = append(gone, name)
					}
				}
				return gone, nil
			}
			waitFor(t, "the operator stops a member, or says that the budget holds the stop", func() error {
				gone, err := stopped()
				if err != nil || len(gone) > 0 {
					return err
				}
				var events corev1.EventList
				if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
					return err
				}
				for _, e := range events.Items {
					if e.Reason == conditions.EventEvictionRefused {
						t.Logf("Event: %s", e.Message)
						return nil
					}
				}
				return errors.New("no member stopped, no Event says why")
			})
			if gone, err := stopped(); err != nil || len(gone) > 0 {
				t.Fatalf("the operator stopped member pods %v (%v) while the PodDisruptionBudget allowed no disruption", gone, err)
			}

			budget.held.Store(false)
			waitForLong(t, "every member pod made anew with the new environment", 3*time.Minute, func() error {
				pods, err := memberPods(ctx, c.Namespace, c.Name)
				if err != nil {
					return err
				}
				for _, p := range pods {
					if _, old := original[p.UID]; old {
						return fmt.Errorf("pod %s is the one from before the change", p.Name)
					}
					if p.DeletionTimestamp == nil && !slices.Contains(p.Spec.Containers[0].Env, env) {
						return fmt.Errorf("pod %s has environment %v", p.Name, p.Spec.Containers[0].Env)
					}
				}
				return nil
			})
			waitConverged(t, c, 3, volumes)
			for _, name := range original {
				if !budget.wasEvicted(name) {
					t.Errorf("pod %s was deleted, not evicted: the budget never counted its stop", name)
				}
			}
		})
	}
}

// TestStopsWithoutTheEvictionGrant: under a Role that does not grant
// pods/eviction (coreos' grants none) the operator's own stops are plain
// deletes, as before: the refused eviction is logged once and a scale-down,
// which stops the surplus member first, still finishes.
func TestStopsWithoutTheEvictionGrant(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	withoutEviction := asGeneratedRole(t, ns, func(role *rbacv1.Role) {
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "pods/eviction") })
	})
	startReconciler(t, withoutEviction, ns, &controller.Reconciler{})
	c := newCluster(ns, "quorum", 4, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 4, false)
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 3 })
	waitConverged(t, c, 3, false)
}
