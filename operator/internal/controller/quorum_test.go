package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// runningOnEtcdKubelet creates a cluster that the operator runs on real
// etcd members (etcdKubelet) and waits until it is Running.
func runningOnEtcdKubelet(t *testing.T, size int, volumes bool) *etcdv1beta2.EtcdCluster {
	t.Helper()
	return runningOnEtcdKubeletWith(t, &controller.Reconciler{}, size, volumes)
}

// runningOnEtcdKubeletWith is runningOnEtcdKubelet with reconciler r.
func runningOnEtcdKubeletWith(t *testing.T, r *controller.Reconciler, size int, volumes bool) *etcdv1beta2.EtcdCluster {
	t.Helper()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, r)
	c := newCluster(ns, "quorum", size, "3.5.21")
	if volumes {
		withVolumes(c)
	}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, size, volumes)
	return c
}

// killPods deletes n member pods at once with no grace period; it returns
// their UIDs.
func killPods(t *testing.T, c *etcdv1beta2.EtcdCluster, n int) map[types.UID]bool {
	t.Helper()
	pods, err := memberPods(context.Background(), c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	killed := map[types.UID]bool{}
	for i := range n {
		if err := k8s.Delete(context.Background(), &pods[i], client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		killed[pods[i].UID] = true
	}
	return killed
}

// TestQuorumLossOnVolumesKeepsEveryWrite deletes a majority of the member
// pods, then all of them, of a cluster on volumes: the members come back on
// their claims, as the same members, with every acknowledged write.
func TestQuorumLossOnVolumesKeepsEveryWrite(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	for _, killed := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d of 3 pods deleted", killed), func(t *testing.T) {
			t.Parallel()
			c := runningOnEtcdKubelet(t, 3, true)
			key := putKey(t, c)
			killPods(t, c, killed)
			waitConverged(t, c, 3, true)
			getKey(t, c, key)
		})
	}
}

// TestAllMembersLostOnEmptyDirIsNotBootstrappedAgain: when every member pod
// of a cluster on emptyDir is gone, so is its data. The operator must not
// start a new, empty cluster under the same name (clients would carry on
// against it as if nothing was lost); it says QuorumLost and Failed.
func TestAllMembersLostOnEmptyDirIsNotBootstrappedAgain(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubelet(t, 3, false)
	optIn(t, c) // not even when the cluster asks to recover from a survivor: there is none
	killed := killPods(t, c, 3)
	waitFor(t, "Failed with Available=False, QuorumLost", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
		if got.Status.Phase != etcdv1beta2.PhaseFailed || available == nil || available.Reason != conditions.ReasonQuorumLost {
			return fmt.Errorf("phase %s, Available %+v", got.Status.Phase, available)
		}
		return nil
	})
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !killed[p.UID] {
			t.Fatalf("pod %s was created after every member was lost; want none (no new, empty cluster)", p.Name)
		}
	}
}

// optIn asks the cluster to recover a lost quorum from a survivor.
func optIn(t *testing.T, c *etcdv1beta2.EtcdCluster) {
	t.Helper()
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) {
		c.Annotations = map[string]string{desired.AnnotationRecoverFromSurvivor: "true"}
	})
}

// TestQuorumLossOnEmptyDirWithASurvivor deletes two of three member pods on
// emptyDir at once. Opted in, the cluster is started again from the
// survivor's data (the seed init container runs in-process, see runSeed) and
// grows back to three members holding a key written before the loss; the
// survivor's pod is replaced. Not opted in, it stays QuorumLost and nothing
// is created or deleted.
func TestQuorumLossOnEmptyDirWithASurvivor(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	start := func(t *testing.T) (*etcdv1beta2.EtcdCluster, string, corev1.Pod) {
		c := runningOnEtcdKubeletWith(t, &controller.Reconciler{SeedImage: "etcdproof/etcd-operator:test"}, 3, false)
		key := putKey(t, c)
		pods, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		return c, key, pods[2] // killPods deletes the first ones
	}

	t.Run("opted in: recovered from the survivor", func(t *testing.T) {
		t.Parallel()
		c, key, survivor := start(t)
		optIn(t, c)
		killed := killPods(t, c, 2)
		waitConverged(t, c, 3, false)
		getKey(t, c, key)
		pods, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		seeded := 0
		for _, p := range pods {
			if killed[p.UID] || p.UID == survivor.UID {
				t.Fatalf("pod %s of the old cluster is still there", p.Name)
			}
			if p.Annotations[desired.AnnotationSeededFrom] == survivor.Name {
				seeded++
			}
		}
		if seeded != 1 {
			t.Fatalf("%d pods seeded from %s, want 1", seeded, survivor.Name)
		}
		if eventsRecorded(t) {
			waitFor(t, "Event "+conditions.EventRecoveringFromSurvivor, func() error {
				seen, err := eventReasons(ctx, c.Namespace)
				if err == nil && !seen[conditions.EventRecoveringFromSurvivor] {
					err = fmt.Errorf("events %v", seen)
				}
				return err
			})
		}
	})

	t.Run("not opted in: QuorumLost, nothing changed", func(t *testing.T) {
		t.Parallel()
		c, _, survivor := start(t)
		killPods(t, c, 2)
		waitFor(t, "Available=False, QuorumLost, naming the opt-in", func() error {
			var got etcdv1beta2.EtcdCluster
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
				return err
			}
			available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
			if available == nil || available.Reason != conditions.ReasonQuorumLost ||
				!strings.Contains(available.Message, desired.AnnotationRecoverFromSurvivor) {
				return fmt.Errorf("Available %+v", available)
			}
			return nil
		})
		// A few passes later: still only the survivor, running.
		for range 5 {
			time.Sleep(time.Second)
			pods, err := memberPods(ctx, c.Namespace, c.Name)
			if err != nil {
				t.Fatal(err)
			}
			kept := false
			for _, p := range pods {
				if p.UID != survivor.UID && p.DeletionTimestamp == nil {
					t.Fatalf("pod %s was created while quorum was lost without opt-in", p.Name)
				}
				kept = kept || (p.UID == survivor.UID && p.DeletionTimestamp == nil)
			}
			if !kept {
				t.Fatalf("the survivor %s was deleted", survivor.Name)
			}
		}
	})
}
