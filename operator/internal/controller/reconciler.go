// Package controller is the EtcdCluster reconciler: each pass gathers the
// state of pods and etcd, asks plan for the one next safe action, takes it,
// and writes status only when it changed.
package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The Role is generated from these markers (make manifests). Verbs are exactly
// what the reconciler calls; the cache needs list+watch for everything it reads.
// Events go through the events.k8s.io API only (controller-runtime's
// GetEventRecorder). Leader election (its Lease, and the core Events the
// lease lock records) is granted apart, by a Role in the operator's own
// namespace (manifests/rbac/leader_election_role.yaml), so the cluster-wide
// install does not hand out Leases in every namespace.
//
// update on etcdclusters/finalizers: member pods, Services and claims carry a
// controller owner reference with blockOwnerDeletion, which clusters running
// the OwnerReferencesPermissionEnforcement admission plugin (OpenShift, for
// one) only accept from a client that may update the owner's finalizers. kind
// does not enable the plugin, so an audit there never shows this verb in use.
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=services,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=persistentvolumeclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,namespace=etcd-operator-system,resources=events,verbs=create;patch

// Reconciler reconciles EtcdCluster objects.
type Reconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	// Dial opens an etcd admin client; tests may point it elsewhere.
	Dial etcdadmin.Dialer
	// Options switch on the unsafe self-test behaviours of the plan, Unsafe
	// those of the member objects.
	Options plan.Options
	Unsafe  desired.Unsafe
	// Now and NameSuffix are injectable for tests.
	Now        func() time.Time
	NameSuffix func() string
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) nameSuffix() string {
	if r.NameSuffix != nil {
		return r.NameSuffix()
	}
	return utilrand.String(10)
}

// SetupWithManager registers the reconciler; changes to the pods, Services
// and claims it owns wake it up.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Dial == nil {
		r.Dial = etcdadmin.Dial
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&etcdv1beta2.EtcdCluster{}).
		Owns(&corev1.Pod{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Named("etcdcluster").
		Complete(r)
}

// Reconcile runs one pass: gather → decide → act → status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var cluster etcdv1beta2.EtcdCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &cluster); err != nil {
		if client.IgnoreNotFound(err) == nil {
			metrics.Forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // owner references let the garbage collector clean up
	}
	if !cluster.Spec.Paused {
		if err := r.ensureServices(ctx, &cluster); err != nil {
			return ctrl.Result{}, err
		}
	}
	obs, err := r.gather(ctx, &cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer obs.close()

	action := plan.Next(obs.Observed, r.Options)
	logger.V(1).Info("next action", "kind", action.Kind, "member", action.Member, "message", action.Message)
	actErr := r.act(ctx, &cluster, obs, &action)
	if actErr != nil {
		logger.Info("action failed", "kind", action.Kind, "member", action.Member, "error", actErr.Error())
	}

	status := computeStatus(&cluster, obs, action)
	r.recordRefusal(&cluster, status)
	if !equality.Semantic.DeepEqual(cluster.Status, *status) {
		cluster.Status = *status
		if err := r.Client.Status().Update(ctx, &cluster); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating status: %w", err)
		}
	}
	if actErr != nil {
		// etcd refuses membership changes for a few seconds after any member
		// (re)connects; exponential backoff would turn that into minutes, so
		// retry at the plan's in-flight pace instead.
		return ctrl.Result{RequeueAfter: plan.PollInFlight}, nil
	}
	return ctrl.Result{RequeueAfter: action.RequeueAfter}, nil
}
