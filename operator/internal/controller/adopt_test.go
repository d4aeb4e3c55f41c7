package controller_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// orphanEverything does what `kubectl delete etcdcluster --cascade=orphan`
// does (envtest has no garbage collector to do it): the EtcdCluster goes, and
// its pods, claims and Services lose their owner reference.
func orphanEverything(t *testing.T, c *etcdv1beta2.EtcdCluster) {
	t.Helper()
	ctx := context.Background()
	// The garbage collector orphans the dependents while the EtcdCluster is
	// being deleted, when the operator no longer acts on it.
	if err := k8s.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the EtcdCluster gone", func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &etcdv1beta2.EtcdCluster{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	objs, err := clusterObjects(ctx, c.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		before, _ := obj.DeepCopyObject().(client.Object)
		obj.SetOwnerReferences(nil)
		if err := k8s.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
}

// clusterObjects lists the pods, claims and Services of a test namespace:
// what an EtcdCluster owns there.
func clusterObjects(ctx context.Context, ns string) ([]client.Object, error) {
	var pods corev1.PodList
	var claims corev1.PersistentVolumeClaimList
	var services corev1.ServiceList
	for _, list := range []client.ObjectList{&pods, &claims, &services} {
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
	}
	var objs []client.Object
	for i := range pods.Items {
		objs = append(objs, &pods.Items[i])
	}
	for i := range claims.Items {
		objs = append(objs, &claims.Items[i])
	}
	for i := range services.Items {
		objs = append(objs, &services.Items[i])
	}
	return objs, nil
}

func podNames(t *testing.T, c *etcdv1beta2.EtcdCluster) []string {
	t.Helper()
	pods, err := memberPods(context.Background(), c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// TestOrphanedMembersAreAdopted: an EtcdCluster deleted with
// --cascade=orphan and created again under its name takes its members back
// (the same pods, claims and data) instead of starting a second cluster
// behind the same Service.
func TestOrphanedMembersAreAdopted(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubelet(t, 3, true)
	key := putKey(t, c)
	before := podNames(t, c)
	orphanEverything(t, c)

	again := newCluster(c.Namespace, c.Name, 3, "3.5.21")
	withVolumes(again)
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, again, 3, true)
	if after := podNames(t, again); !reflect.DeepEqual(after, before) {
		t.Fatalf("member pods %v after re-creation, want the adopted %v", after, before)
	}
	waitFor(t, "pods, claims and Services controlled by the new EtcdCluster", func() error {
		objs, err := clusterObjects(ctx, c.Namespace)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := ownedBy(obj, again); err != nil {
				return err
			}
		}
		return nil
	})
	getKey(t, again, key)
}

// TestForeignPodsStopTheCluster: a pod with the cluster's labels that
// another controller owns is never adopted, and the cluster does not
// bootstrap beside it; its status says why.
func TestForeignPodsStopTheCluster(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: ns}}
	if err := k8s.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	foreign := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: ns, Labels: desired.Selector("taken"),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "quay.io/coreos/etcd:v3.5.21"}}},
	}
	if err := k8s.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	c := newCluster(ns, "taken", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitForReason(t, "a condition naming the foreign pod", c, conditions.ReasonForeignPods)
	if names := podNames(t, c); !reflect.DeepEqual(names, []string{"stranger"}) {
		t.Fatalf("pods %v: the cluster must not bootstrap beside a foreign pod", names)
	}
	var got corev1.Pod
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(foreign), &got); err != nil {
		t.Fatal(err)
	}
	if ctrl := metav1.GetControllerOf(&got); ctrl == nil || ctrl.Kind != "ConfigMap" {
		t.Fatalf("foreign pod's controller is now %+v", ctrl)
	}
}

// TestUnsafeLeftClaimIsNotAdopted: the self-test's leaves-a-claim variant
// makes one claim with no owner on purpose; adopting orphaned claims must
// not undo that (make e2e-selftest found it did, and its cleanup passed).
func TestUnsafeLeftClaimIsNotAdopted(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubeletWith(t, &controller.Reconciler{Unsafe: desired.Unsafe{LeavePVCOnDelete: true}}, 3, true)
	var claims corev1.PersistentVolumeClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	ownerless := 0
	for _, pvc := range claims.Items {
		if metav1.GetControllerOf(&pvc) == nil {
			ownerless++
		}
	}
	if ownerless != 1 {
		t.Fatalf("%d of %d claims without an owner once the cluster runs, want 1", ownerless, len(claims.Items))
	}
}

// TestRecreatedOverClaimsKeepsTheData: an EtcdCluster deleted with
// --cascade=orphan, every member pod deleted after, then created again
// under its name: its members start again on the claims left behind, with
// every acknowledged write. Before, a new, empty cluster was bootstrapped
// beside the claims, which were then deleted as claims of no member.
func TestRecreatedOverClaimsKeepsTheData(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubelet(t, 3, true)
	key := putKey(t, c)
	before := podNames(t, c)
	orphanEverything(t, c)
	killPods(t, c, 3)
	waitFor(t, "every member pod gone", func() error {
		if names := podNames(t, c); len(names) > 0 {
			return fmt.Errorf("pods %v", names)
		}
		return nil
	})

	again := newCluster(c.Namespace, c.Name, 3, "3.5.21")
	withVolumes(again)
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, again, 3, true)
	if after := podNames(t, again); !reflect.DeepEqual(after, before) {
		t.Fatalf("member pods %v after re-creation, want the members of the claims %v", after, before)
	}
	getKey(t, again, key)
	var claims corev1.PersistentVolumeClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pvc := range claims.Items {
		names = append(names, pvc.Name)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, before) {
		t.Fatalf("claims %v after re-creation, want the earlier cluster's %v", names, before)
	}
}

// TestNoClusterBesideClaimsWithoutClaimSpec: created again over claims
// left behind, but without a claim spec, the cluster starts nothing and
// says why; the claims stay.
func TestNoClusterBesideClaimsWithoutClaimSpec(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubelet(t, 3, true)
	orphanEverything(t, c)
	killPods(t, c, 3)
	again := newCluster(c.Namespace, c.Name, 3, "3.5.21")
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitForReason(t, "a condition naming the claims", again, conditions.ReasonClaimsWithoutClaimSpec)
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			t.Fatalf("pod %s created beside the earlier cluster's claims", p.Name)
		}
	}
}

// waitForReason waits until one of c's status conditions has reason.
func waitForReason(t *testing.T, what string, c *etcdv1beta2.EtcdCluster, reason string) {
	t.Helper()
	waitFor(t, what, func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Reason == reason {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
}
