package controller_test

import (
	"context"
	"fmt"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// asGeneratedRole returns credentials of a ServiceAccount in ns bound to the
// generated Role (manifests/rbac/role.yaml), changed by edits, and nothing else.
func asGeneratedRole(t *testing.T, ns string, edits ...func(*rbacv1.Role)) *rest.Config {
	t.Helper()
	ctx := context.Background()
	role := readRole(t, "role.yaml")
	role.Namespace = ns
	for _, edit := range edits {
		edit(role)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "etcd-operator", Namespace: ns}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	for _, obj := range []client.Object{sa, role, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa.Name)}
	return as
}

// budgetGVK is the PodDisruptionBudget version the test API server serves
// (policy/v1 from Kubernetes 1.21, policy/v1beta1 before).
func budgetGVK() schema.GroupVersionKind {
	if served("policy/v1") {
		return schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}
	}
	return schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"}
}

// TestDisruptionBudget runs the operator with the generated Role only: it
// must create the cluster's PodDisruptionBudget (minAvailable 2 over the
// voters' pods: spec.size 3 while no member answers, controlled by the
// EtcdCluster, so the garbage collector deletes it with the cluster) and
// put its spec back when someone changes it. The scale subresource stays
// for kubectl scale and autoscalers.
func TestDisruptionBudget(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperatorAs(t, asGeneratedRole(t, ns), ns, nil, plan.Options{})
	c := newCluster(ns, "budget", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}

	pdb := &unstructured.Unstructured{}
	pdb.SetGroupVersionKind(budgetGVK())
	key := client.ObjectKey{Namespace: ns, Name: "budget"}
	check := func() error {
		if err := k8s.Get(ctx, key, pdb); err != nil {
			return err
		}
		minAvailable, _, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "minAvailable")
		_, hasMax, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "maxUnavailable")
		selector, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
		if fmt.Sprint(minAvailable) != "2" || hasMax || len(selector) != 3 || selector["app"] != "etcd" || selector["etcd_cluster"] != "budget" ||
			selector["etcd.database.coreos.com/voter"] != "true" {
			return fmt.Errorf("budget spec %v", pdb.Object["spec"])
		}
		if err := ownedBy(pdb, c); err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(pdb); ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			return fmt.Errorf("owner reference %+v: the cluster's deletion must wait for the budget's", ref)
		}
		return nil
	}
	waitFor(t, "the PodDisruptionBudget, minAvailable 2 over the voters' pods, controlled by the cluster", check)

	if err := unstructured.SetNestedField(pdb.Object, int64(1), "spec", "minAvailable"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a changed budget is put back", check)

	var scale autoscalingv1.Scale
	if err := k8s.SubResource("scale").Get(ctx, c, &scale); err != nil {
		t.Fatalf("scale subresource: %v", err)
	}
	if scale.Spec.Replicas != 3 {
		t.Errorf("scale spec.replicas = %d, want spec.size 3", scale.Spec.Replicas)
	}
}

// TestDisruptionBudgetFollowsTheVoters: the budget is counted from the
// voters etcd lists, not from spec.size: a running cluster scaled 3→5 keeps
// all but one of its voters (minAvailable 4 once five vote), and back to 3
// keeps 2 again.
func TestDisruptionBudgetFollowsTheVoters(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := runningOnEtcdKubelet(t, 3, false)
	pdb := &unstructured.Unstructured{}
	pdb.SetGroupVersionKind(budgetGVK())
	minAvailable := func(want string) func() error {
		return func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), pdb); err != nil {
				return err
			}
			got, _, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "minAvailable")
			if fmt.Sprint(got) != want {
				return fmt.Errorf("minAvailable %v, want %s", got, want)
			}
			return nil
		}
	}
	waitFor(t, "minAvailable 2 with 3 voters", minAvailable("2"))
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 5 })
	waitConverged(t, c, 5, false)
	waitFor(t, "minAvailable 4 with 5 voters", minAvailable("4"))
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 3 })
	waitConverged(t, c, 3, false)
	waitFor(t, "minAvailable 2 with 3 voters again", minAvailable("2"))
}
