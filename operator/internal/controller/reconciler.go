// Package controller is the EtcdCluster reconciler: each pass gathers the
// state of pods and etcd, asks plan for the one next safe action, takes it,
// and writes status only when it changed.
package controller

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/metrics"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// The Role is generated from these markers (make manifests). Verbs are exactly
// what the reconciler calls; the cache needs list+watch for everything it reads.
// Events go through the events.k8s.io API (controller-runtime's
// GetEventRecorder); core/v1 Events only where that is not served or not
// allowed (coreos' Role; see kubecompat.ChooseEvents). Leader election (its
// Lease, and the core Events the lease lock records) is granted apart, by a
// Role in the operator's own namespace
// (manifests/rbac/leader_election_role.yaml), so the cluster-wide install
// does not hand out Leases in every namespace.
//
// update on etcdclusters/finalizers: member pods, Services and claims carry a
// controller owner reference with blockOwnerDeletion, which clusters running
// the OwnerReferencesPermissionEnforcement admission plugin (OpenShift, for
// one) only accept from a client that may update the owner's finalizers. kind
// does not enable the plugin, so an audit there never shows this verb in use.
//
// create on pods/eviction: the operator's own stops of a healthy voter (a
// roll, a scale down) are evictions, which the PodDisruptionBudget counts
// with a drain's (see stopPod). Without it they are plain deletes.
//
// patch on pods, claims and Services: only to adopt a cluster's own orphaned
// objects (its EtcdCluster deleted with --cascade=orphan and created again),
// so a run that never does that shows the grant unused.
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,namespace=etcd-operator-system,resources=etcdclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=persistentvolumeclaims,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=events.k8s.io,namespace=etcd-operator-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=policy,namespace=etcd-operator-system,resources=poddisruptionbudgets,verbs=get;list;watch;create;update

// Reconciler reconciles EtcdCluster objects.
type Reconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	// Dial opens an etcd admin client; tests may point it elsewhere.
	Dial etcdadmin.Dialer
	// APIReader reads from the API server, not the cache (the manager's,
	// set in SetupWithManager when nil): see writeStatus.
	APIReader client.Reader
	// Options switch on the unsafe self-test behaviours of the plan, Unsafe
	// those of the member objects.
	Options plan.Options
	Unsafe  desired.Unsafe
	// NotRunningDeadline: see plan.Observed (0: plan.DefaultNotRunningDeadline).
	NotRunningDeadline time.Duration
	// LearnerDeadline and CreatingDeadline: see plan.Observed (0: the plan's defaults).
	LearnerDeadline, CreatingDeadline time.Duration
	// NoDryRun, when set, says why a new member's pod is not checked with a
	// server-side dry run before its learner is added (see
	// checkMemberObjects): the API server has none (before Kubernetes 1.13;
	// older ones would create the pod for real).
	NoDryRun string
	// MaxConcurrentReconciles is how many clusters are reconciled at once
	// (0: DefaultMaxConcurrentReconciles); one cluster is never reconciled
	// by two workers at a time.
	MaxConcurrentReconciles int
	// SeedImage runs the operator's binary in a seeded member's init
	// container (plan.Observed.SeedImage); "" when unknown.
	SeedImage string
	// disruptionBudget is the PodDisruptionBudget type served (SetupWithManager).
	disruptionBudget client.Object
	// Now and NameSuffix are injectable for tests.
	Now        func() time.Time
	NameSuffix func() string

	// EventsOff, when set, says why no Events are recorded (the grant allows
	// neither events API); the Authorized condition repeats it.
	EventsOff string
	// WithoutDisruptionBudget, when set, says why clusters get no
	// PodDisruptionBudget: the grant lacks them (coreos' Role), and watching
	// them unallowed would keep the controller from starting.
	WithoutDisruptionBudget string
	// WithoutEviction, when set, says why member pods are deleted rather
	// than evicted: the grant lacks create on pods/eviction (coreos' Role).
	// The operator's own stops are then not counted against a drain's.
	WithoutEviction string
	// evictionVersion is the Eviction API's version (SetupWithManager).
	evictionVersion string
	// StatusWithObject writes status with the object from the start: the
	// grant lacks etcdclusters/status (coreos' Role), so the status
	// subresource is not even tried (see writeStatus).
	StatusWithObject bool
	// Restores: the EtcdRestore CRD is served and the grant allows reading
	// EtcdRestores, so a cluster may be restored from a backup.
	Restores bool
	// RestoreStatusWithObject writes EtcdRestore status with the object from
	// the start: the grant lacks etcdrestores/status (coreos' Role).
	RestoreStatusWithObject bool

	statusViaObject atomic.Bool // writeStatus: status goes with the object
	memo            sync.Map    // types.NamespacedName → memoStatus (recall)
	warned          sync.Map    // causes logged once (warnOnce)
	refused         refusals
	created         createdPods    // member pods the cache may not show yet
	failures        changeFailures // changes that failed in a row (backoff)
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

// SetupWithManager registers the reconciler; changes to the pods, Services,
// claims and PodDisruptionBudget (spec only) it owns wake it up.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Dial == nil {
		r.Dial = etcdadmin.Dial
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&etcdv1beta2.EtcdCluster{}).
		Owns(&corev1.Pod{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.PersistentVolumeClaim{})
	if r.WithoutDisruptionBudget == "" {
		var err error
		if r.disruptionBudget, err = disruptionBudgetKind(mgr.GetRESTMapper()); err != nil {
			return err
		}
		b = b.Owns(r.disruptionBudget, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	if r.WithoutEviction == "" {
		var err error
		if r.evictionVersion, err = discoverEvictionVersion(mgr.GetConfig()); err != nil {
			return err
		}
		if r.evictionVersion == "" {
			r.WithoutEviction = "the API server serves no pods/eviction"
			mgr.GetLogger().Info("member pods are stopped with a plain delete, not evicted", "why", r.WithoutEviction)
		}
	}
	if r.Restores {
		// An EtcdRestore has its cluster's name: it wakes that cluster.
		b = b.Watches(&etcdv1beta2.EtcdRestore{}, &handler.EnqueueRequestForObject{})
	}
	return b.Named("etcdcluster").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers(r.MaxConcurrentReconciles)}).
		Complete(r)
}

// DefaultMaxConcurrentReconciles is how many clusters (and backups) are
// reconciled at once by default. A pass can wait on etcd for up to its call
// timeout (a member behind a lost node, say); with one worker every other
// cluster would wait behind it. Four keep a few slow clusters from holding
// up the rest without many concurrent etcd connections on a small operator.
const DefaultMaxConcurrentReconciles = 4

func workers(n int) int {
	if n > 0 {
		return n
	}
	return DefaultMaxConcurrentReconciles
}

// Reconcile runs one pass: gather → decide → act → status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var cluster etcdv1beta2.EtcdCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &cluster); err != nil {
		if client.IgnoreNotFound(err) == nil {
			metrics.Forget(req.Namespace, req.Name)
			r.refused.forget(req.NamespacedName)
			r.created.forget(req.NamespacedName)
			r.failures.forget(req.NamespacedName)
			r.memo.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // owner references let the garbage collector clean up
	}
	stored := cluster.Status.DeepCopy() // as the API server has it; recall may replace it
	r.recall(req.NamespacedName, &cluster)
	// A write the operator's grant does not allow is recorded and skipped:
	// failing the pass would back off exponentially and hold up membership
	// steps that need none of it.
	if !cluster.Spec.Paused {
		if err := r.settle(ctx, req.NamespacedName, writeServices, r.ensureServices(ctx, &cluster)); err != nil {
			return ctrl.Result{}, err
		}
	}
	obs, err := r.gather(ctx, &cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer obs.close()
	if !cluster.Spec.Paused {
		if r.WithoutDisruptionBudget == "" {
			if err := r.settle(ctx, req.NamespacedName, writeDisruptionBudget, r.ensureDisruptionBudget(ctx, &cluster, obs)); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.settle(ctx, req.NamespacedName, writeVoterLabels, r.labelVoters(ctx, obs)); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.settle(ctx, req.NamespacedName, writeTolerations, r.tolerateLostNodes(ctx, &cluster, obs)); err != nil {
			return ctrl.Result{}, err
		}
	}

	action := plan.Next(obs.Observed, r.Options)
	logger.V(1).Info("next action", "kind", action.Kind, "member", action.Member, "message", action.Message)
	actErr := r.act(ctx, &cluster, obs, &action)
	var podRefused *memberPodRefused
	switch {
	case errors.As(actErr, &podRefused):
		// Told by the Stalled condition and an Event; no write was made,
		// so the Authorized condition (the operator's grant) is not concerned.
		logger.Info("new member's pod refused", "error", actErr.Error())
	case actErr != nil || changes(action.Kind):
		if err := r.settle(ctx, req.NamespacedName, writeMembers, actErr); err != nil {
			logger.Info("action failed", "kind", action.Kind, "member", action.Member, "error", err.Error())
		}
	}
	requeue := action.RequeueAfter
	// A failed change is retried after plan.Backoff: first at the in-flight
	// pace (etcd refuses membership changes for a few seconds after any
	// member reconnects, which controller-runtime's exponential backoff
	// would turn into minutes), then at a doubling delay.
	if retry := r.note(req.NamespacedName, cluster.Generation, obs, action, actErr); actErr != nil {
		requeue = retry
	}
	obs.Failures = r.failures.list(req.NamespacedName, cluster.Generation)

	refused := r.refused.list(req.NamespacedName)
	if r.EventsOff != "" {
		refused = append(refused, "events: none recorded: "+r.EventsOff)
	}
	status := computeStatus(&cluster, obs, action, refused)
	if r.Options.OmitCurrentVersion {
		status.CurrentVersion = "" // UNSAFE, self-test only
	}
	r.reportRestore(ctx, &cluster, obs, action, status)
	if !r.Options.Silent { // UNSAFE, self-test only
		updateMetrics(&cluster, status)
	}
	r.recordRefusal(&cluster, status)
	r.warnEvenSize(&cluster, status)
	if !equality.Semantic.DeepEqual(cluster.Status, *status) {
		cluster.Status = *stored
		if err := r.writeStatus(ctx, &cluster, status); err != nil {
			requeue = r.statusNotWritten(ctx, req.NamespacedName, &cluster, status, err, requeue)
		} else {
			r.memo.Delete(req.NamespacedName)
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// settle records the outcome of a write for the Authorized condition: a
// refusal (Forbidden) is recorded and logged once, and not returned; success
// clears an earlier refusal; any other error is returned.
func (r *Reconciler) settle(ctx context.Context, key types.NamespacedName, what string, err error) error {
	switch {
	case err == nil:
		r.refused.clear(key, what)
	case apierrors.IsForbidden(err):
		r.refuse(ctx, key, what, err)
		return nil
	}
	return err
}

// changes reports whether an action of kind writes something.
func changes(k plan.Kind) bool {
	return k != plan.Nothing && k != plan.Wait && k != plan.Fail && k != plan.RefuseRestore
}
