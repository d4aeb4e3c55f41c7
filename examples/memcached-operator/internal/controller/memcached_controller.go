// Package controller is the Memcached controller: for each Memcached, a
// Deployment of spec.size memcached pods, and the pods' names and the
// Deployment's progress in the Memcached's status.
package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
)

// The Role of config/rbac/role.yaml, in the operator's namespace: OLM grants
// it in the namespaces the operator watches (cluster-wide for
// AllNamespaces). Deployments are server-side applied (create and patch);
// no delete: the garbage collector deletes them with their Memcached. The
// status is merge-patched. memcacheds/finalizers: setting
// blockOwnerDeletion on an owner reference needs it where the
// OwnerReferencesPermissionEnforcement admission plugin is on (OpenShift).
// +kubebuilder:rbac:groups=cache.example.com,namespace=memcached-operator-system,resources=memcacheds,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,namespace=memcached-operator-system,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,namespace=memcached-operator-system,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,namespace=memcached-operator-system,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",namespace=memcached-operator-system,resources=pods,verbs=list;watch

// fieldOwner is the operator's name as a server-side apply field manager.
const fieldOwner = client.FieldOwner(managerName)

// MemcachedReconciler runs a Deployment of memcached for each Memcached.
type MemcachedReconciler struct {
	client.Client
	// Image is the memcached image of the pods.
	Image string
}

// Reconcile brings the Deployment of one Memcached to its spec and reports
// the Deployment's pods and progress in its status.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var m cachev1alpha1.Memcached
	if err := r.Get(ctx, req.NamespacedName, &m); err != nil {
		// Gone: the garbage collector deletes its Deployment.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	var d appsv1.Deployment
	err := r.Get(ctx, req.NamespacedName, &d)
	switch {
	case apierrors.IsNotFound(err):
		// Created below; its status follows with the Deployment's events.
	case err != nil:
		return ctrl.Result{}, err
	case !metav1.IsControlledBy(&d, &m):
		// A force apply would take over a Deployment someone else runs.
		return ctrl.Result{}, r.updateStatus(ctx, &m, conflictStatus(&m))
	}
	if err := r.Apply(ctx, deploymentFor(&m, r.Image), fieldOwner, client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying Deployment %s: %w", m.Name, err)
	}

	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(m.Namespace), client.MatchingLabels(podLabels(&m))); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.updateStatus(ctx, &m, statusFor(&m, &d, podNames(pods.Items)))
}

// updateStatus writes status to m if it differs. A merge patch: the
// operator is the only writer of the status, so it needs no conflict check.
func (r *MemcachedReconciler) updateStatus(ctx context.Context, m *cachev1alpha1.Memcached, status cachev1alpha1.MemcachedStatus) error {
	if equality.Semantic.DeepEqual(m.Status, status) {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Status = status
	return r.Status().Patch(ctx, m, patch)
}

// SetupWithManager reconciles a Memcached when it changes, when its
// Deployment does (scaled, rolled out, pods becoming available), and when
// one of its pods is created or deleted (status.nodes).
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1alpha1.Memcached{}).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(memcachedOfPod),
			// A pod's status changes reach the Memcached through its
			// Deployment's; only its coming and going changes the names.
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		Complete(r)
}

// memcachedOfPod is the Memcached a pod belongs to, by its labels: pods are
// owned by a ReplicaSet, not by the Memcached.
func memcachedOfPod(_ context.Context, pod client.Object) []reconcile.Request {
	l := pod.GetLabels()
	if l[labelManagedBy] != managerName || l[labelName] != appName || l[labelInstance] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: l[labelInstance]}}}
}

// CacheOptions are the manager's cache for the controller, over namespaces
// (none: every namespace). Its pods are only the memcached pods the
// operator made: without the label selector it would hold every pod of the
// namespaces it watches in memory.
func CacheOptions(namespaces []string) cache.Options {
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: labels.SelectorFromSet(labels.Set{labelName: appName, labelManagedBy: managerName})},
	}}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}
