package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
)

// A Memcached of size 2 gets a Deployment of 2 memcached pods that the
// Memcached owns; its status names the pods and follows the Deployment's
// progress; a new size scales the Deployment, and a Deployment scaled by
// hand is scaled back.
func TestMemcachedRunsADeploymentOfSizePods(t *testing.T) {
	admin := adminClient(t)
	ns := startOperator(t, admin)
	ctx := context.Background()
	m := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 2},
	}
	if err := admin.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(m)

	var d appsv1.Deployment
	eventually(t, "a Deployment of 2 memcached pods", func(ctx context.Context) error {
		if err := admin.Get(ctx, key, &d); err != nil {
			return err
		}
		return replicas(&d, 2)
	})
	// envtest runs no garbage collector; this reference is what makes it
	// delete the Deployment, and its pods, with the Memcached.
	if ref := metav1.GetControllerOf(&d); ref == nil || ref.UID != m.UID || ref.Kind != "Memcached" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("the Deployment's controller is %+v, want Memcached %s (uid %s) blocking its deletion", ref, m.Name, m.UID)
	}
	checkMemcachedPod(t, d.Spec.Template.Spec)

	eventually(t, "not available while no pod runs", func(ctx context.Context) error {
		return conditions(ctx, admin, m, metav1.ConditionFalse, metav1.ConditionTrue)
	})

	// The pods the ReplicaSet would make (envtest has none of the
	// controllers that would).
	var names []string
	for i := range 2 {
		names = append(names, createPod(t, admin, &d, fmt.Sprintf("cache-%d", i)))
	}
	eventually(t, "status.nodes naming both pods", func(ctx context.Context) error {
		return nodes(ctx, admin, m, names)
	})

	// The Deployment controller reports both pods available.
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	if err := admin.Status().Update(ctx, &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "available, rollout complete", func(ctx context.Context) error {
		return conditions(ctx, admin, m, metav1.ConditionTrue, metav1.ConditionFalse)
	})

	if err := admin.Patch(ctx, m, client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"size":3}}`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Deployment scaled to 3", func(ctx context.Context) error {
		if err := admin.Get(ctx, key, &d); err != nil {
			return err
		}
		return replicas(&d, 3)
	})
	eventually(t, "unavailable, progressing while 2 of 3 pods are available", func(ctx context.Context) error {
		return conditions(ctx, admin, m, metav1.ConditionFalse, metav1.ConditionTrue)
	})

	// kubectl scale deployment cache --replicas=1: the size is the Memcached's.
	if err := admin.Patch(ctx, &d, client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"replicas":1}}`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Deployment scaled back to 3", func(ctx context.Context) error {
		if err := admin.Get(ctx, key, &d); err != nil {
			return err
		}
		return replicas(&d, 3)
	})

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: names[0], Namespace: ns}}
	if err := admin.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "status.nodes without the deleted pod", func(ctx context.Context) error {
		return nodes(ctx, admin, m, names[1:])
	})
}

// The size is bounded by the CRD's schema, so a wrong one is refused at
// kubectl apply, not discovered later.
func TestSizeOutOfRangeIsRefused(t *testing.T) {
	admin := adminClient(t)
	for _, size := range []int32{-1, 6} {
		m := &cachev1alpha1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Name: "wrong-size", Namespace: "default"},
			Spec:       cachev1alpha1.MemcachedSpec{Size: size},
		}
		if err := admin.Create(context.Background(), m); !apierrors.IsInvalid(err) {
			t.Errorf("size %d: created with error %v, want refused as invalid", size, err)
		}
	}
}

// A Deployment of the Memcached's name that something else runs is left as
// it is, and the Memcached says why it is not available.
func TestDeploymentOfAnotherOwnerIsLeftAlone(t *testing.T) {
	admin := adminClient(t)
	ns := startOperator(t, admin)
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	theirs := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
			},
		},
	}
	if err := admin.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	m := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 3},
	}
	if err := admin.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the conflict reported", func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(m.Status.Conditions, cachev1alpha1.ConditionAvailable); c == nil || c.Reason != reasonDeploymentConflict {
			return fmt.Errorf("Available condition %+v", c)
		}
		return nil
	})
	var d appsv1.Deployment
	if err := admin.Get(ctx, client.ObjectKeyFromObject(theirs), &d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 1 || d.Spec.Template.Spec.Containers[0].Image != "web:1" || len(d.OwnerReferences) > 0 {
		t.Errorf("the other Deployment was changed: replicas %d, image %s, owners %v",
			*d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.OwnerReferences)
	}
}

func replicas(d *appsv1.Deployment, want int32) error {
	if got := ptr.Deref(d.Spec.Replicas, -1); got != want {
		return fmt.Errorf("replicas %d, want %d", got, want)
	}
	return nil
}

// checkMemcachedPod: memcached, as the walk-through runs it, on its port,
// within the restricted Pod Security Standard.
func checkMemcachedPod(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want memcached alone", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != testImage || !slices.Equal(c.Args, []string{"--memory-limit=64", "-o", "modern", "-v"}) {
		t.Errorf("container runs %s %v, want %s with 64 MiB, modern, verbose", c.Image, c.Args, testImage)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 11211 {
		t.Errorf("ports %+v, want 11211", c.Ports)
	}
	ps, cs := pod.SecurityContext, c.SecurityContext
	restricted := ps != nil && cs != nil &&
		ptr.Deref(ps.RunAsNonRoot, false) &&
		ps.SeccompProfile != nil && ps.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault &&
		cs.AllowPrivilegeEscalation != nil && !*cs.AllowPrivilegeEscalation &&
		cs.Capabilities != nil && slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"})
	if !restricted {
		t.Errorf("pod security %+v, container security %+v: not the restricted level", ps, cs)
	}
}

func createPod(t *testing.T, admin client.Client, d *appsv1.Deployment, name string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       d.Spec.Template.Spec,
	}
	if err := admin.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return name
}

func nodes(ctx context.Context, c client.Client, m *cachev1alpha1.Memcached, want []string) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		return err
	}
	if !slices.Equal(m.Status.Nodes, want) {
		return fmt.Errorf("status.nodes %v, want %v", m.Status.Nodes, want)
	}
	return nil
}

// conditions checks Available and Progressing, each set for the
// Memcached's current generation.
func conditions(ctx context.Context, c client.Client, m *cachev1alpha1.Memcached, available, progressing metav1.ConditionStatus) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		return err
	}
	var errs []error
	for typ, want := range map[string]metav1.ConditionStatus{cachev1alpha1.ConditionAvailable: available, cachev1alpha1.ConditionProgressing: progressing} {
		got := meta.FindStatusCondition(m.Status.Conditions, typ)
		if got == nil || got.Status != want || got.ObservedGeneration != m.Generation {
			errs = append(errs, fmt.Errorf("%s is %+v, want %s for generation %d", typ, got, want, m.Generation))
		}
	}
	return errors.Join(errs...)
}
