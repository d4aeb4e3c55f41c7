// Command etcd-operator runs the EtcdCluster controller: flags → manager → controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

type options struct {
	namespace               string
	clusterWide             bool
	metricsAddr             string
	probeAddr               string
	leaderElect             bool
	leaderElectionNamespace string
	unsafe                  plan.Options
	unsafeMembers           desired.Unsafe
}

func parseFlags(args []string) (options, *zap.Options, error) {
	var o options
	fs := flag.NewFlagSet("etcd-operator", flag.ContinueOnError)
	fs.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace whose EtcdClusters are managed (default: $POD_NAMESPACE, set from the downward API).")
	fs.BoolVar(&o.clusterWide, "cluster-wide", false,
		"Manage EtcdClusters in every namespace (needs the ClusterRole from manifests/cluster-wide).")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the /metrics endpoint (0 disables it).")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader with a Lease so only one replica acts.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease (default: $POD_NAMESPACE, else --namespace).")
	fs.BoolVar(&o.unsafe.SkipDeadMemberRemoval, "unsafe-skip-dead-member-removal", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): replace a dead member's pod but leave the dead member in etcd's membership.")
	fs.BoolVar(&o.unsafe.UpgradeAllAtOnce, "unsafe-upgrade-all-at-once", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): restart every member at once on upgrade, with no health gate.")
	fs.BoolVar(&o.unsafeMembers.LeavePVCOnDelete, "unsafe-leave-pvc-on-delete", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): create one member claim of each cluster without an owner reference, so it is left behind when the cluster is deleted (clusters with spec.pod.persistentVolumeClaimSpec only).")
	fs.BoolVar(&o.unsafeMembers.ShellProbe, "unsafe-shell-probe", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): give members the old readiness probe that execs /bin/sh, which etcd images without a shell (3.4.23+, 3.5.7+) never pass.")
	zapOpts := &zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	if !o.clusterWide && o.namespace == "" {
		return o, nil, errors.New("--namespace is required (or set POD_NAMESPACE), unless --cluster-wide is given")
	}
	if o.leaderElectionNamespace == "" {
		o.leaderElectionNamespace = os.Getenv("POD_NAMESPACE")
	}
	if o.leaderElectionNamespace == "" {
		o.leaderElectionNamespace = o.namespace
	}
	if o.leaderElect && o.leaderElectionNamespace == "" {
		return o, nil, errors.New("--leader-elect needs --leader-election-namespace (or POD_NAMESPACE)")
	}
	return o, zapOpts, nil
}

func main() {
	// Before any client exists: client-go reads its feature gates once.
	gates := kubecompat.Install()
	o, zapOpts, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "etcd-operator:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), gates, o); err != nil {
		ctrl.Log.Error(err, "operator stopped")
		os.Exit(1)
	}
}

// eventsV1Served reports whether the API server serves events.k8s.io/v1.
func eventsV1Served(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	_, err = dc.ServerResourcesForGroupVersion(eventsv1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// run serves until ctx ends.
func run(ctx context.Context, restCfg *rest.Config, gates *kubecompat.Gates, o options) error {
	log := ctrl.Log.WithName("setup")
	server, adaptations, err := gates.AdaptTo(restCfg)
	if err != nil {
		return err
	}
	for _, a := range adaptations {
		log.Info("adapting to an old API server: "+a, "kubernetes", server.GitVersion)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(etcdv1beta2.AddToScheme(scheme))

	cacheOpts := cache.Options{}
	if !o.clusterWide {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.namespace: {}}
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "etcd-operator.etcd.database.coreos.com",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// Leadership is handed over at shutdown so a rollout does not wait for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if o.unsafe != (plan.Options{}) || o.unsafeMembers != (desired.Unsafe{}) {
		log.Info("UNSAFE test-only behaviour is on; never run this in production",
			"skipDeadMemberRemoval", o.unsafe.SkipDeadMemberRemoval, "upgradeAllAtOnce", o.unsafe.UpgradeAllAtOnce,
			"leavePVCOnDelete", o.unsafeMembers.LeavePVCOnDelete, "shellProbe", o.unsafeMembers.ShellProbe)
	}
	r := &controller.Reconciler{
		Client:  mgr.GetClient(),
		Dial:    etcdadmin.Dial,
		Options: o.unsafe,
		Unsafe:  o.unsafeMembers,
	}
	// Events use events.k8s.io/v1 (Kubernetes 1.19+). Older API servers get
	// none rather than a core-Events grant every newer cluster would not use.
	switch served, err := eventsV1Served(restCfg); {
	case err != nil:
		return fmt.Errorf("discovering the events API: %w", err)
	case served:
		r.Recorder = mgr.GetEventRecorder("etcd-operator")
	default:
		log.Info("events.k8s.io/v1 is not served by this API server (Kubernetes older than 1.19): the operator records no Events; status conditions and logs still say what it does")
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	log.Info("starting", "namespace", o.namespace, "clusterWide", o.clusterWide, "leaderElect", o.leaderElect)
	return mgr.Start(ctx)
}
