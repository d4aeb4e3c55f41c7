// Command etcd-operator runs the EtcdCluster controller: flags → manager → controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
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
	metricsCertDir          string
	probeAddr               string
	pprofAddr               string
	leaderElect             bool
	leaderElectionNamespace string
	unsafe                  plan.Options
	unsafeMembers           desired.Unsafe
	notRunningDeadline      time.Duration
	workers                 int
	createCRD               bool
	podName                 string
	seedImage               string
	// servableCheck is how often a kind not served at start is asked after.
	servableCheck time.Duration
	coreos        coreosFlags
	// withoutEffect are coreos flags given that change nothing here.
	withoutEffect []string
	// dial reaches etcd (nil: etcdadmin.Dial); tests route it.
	dial etcdadmin.Dialer
	// skipNameValidation: tests start the operator more than once in one
	// process, which controller-runtime refuses unless told.
	skipNameValidation bool
}

func parseFlags(args []string) (options, *zap.Options, error) {
	var o options
	fs := flag.NewFlagSet("etcd-operator", flag.ContinueOnError)
	fs.StringVar(&o.namespace, "namespace", "",
		"Namespace whose EtcdClusters are managed (default: $WATCH_NAMESPACE where set, as OLM sets it: empty means every namespace; else $POD_NAMESPACE, else $MY_POD_NAMESPACE as coreos etcd-operator's Deployment sets it).")
	fs.BoolVar(&o.clusterWide, "cluster-wide", false,
		"Manage EtcdClusters in every namespace (needs the ClusterRole from manifests/cluster-wide).")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "",
		"Address of the /metrics endpoint (0 disables it; default: "+metricsLoopback+", reachable from the pod only, or "+metricsEveryInterface+" with --metrics-cert-dir).")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "",
		"Directory with tls.crt and tls.key: /metrics is served over HTTPS, by default on every interface (empty: plain HTTP).")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of Go's /debug/pprof endpoints, for profiling the operator (empty: off).")
	fs.BoolVar(&o.leaderElect, "leader-elect", os.Getenv(envCoreosPodName) != "",
		"Elect a leader with a Lease so only one replica acts; off, with a log line, where Leases are not allowed (default: true when $MY_POD_NAME is set, as in coreos etcd-operator's Deployment: coreos always elected).")
	fs.BoolVar(&o.createCRD, "create-crd", true,
		"Register the EtcdCluster CRD at start, or update it to this operator's (as coreos etcd-operator did); without a grant on CRDs it logs so and goes on.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease (default: $POD_NAMESPACE, else $MY_POD_NAMESPACE, else --namespace).")
	fs.DurationVar(&o.notRunningDeadline, "member-not-running-deadline", plan.DefaultNotRunningDeadline,
		"How long a member pod may stay pending unscheduled, in ImagePullBackOff, ErrImagePull, CrashLoopBackOff or another container error, or terminating on a NotReady node, before its member counts as dead and is replaced (timed from the pod's status, so an operator restart keeps the clock).")
	fs.IntVar(&o.workers, "max-concurrent-reconciles", controller.DefaultMaxConcurrentReconciles,
		"How many EtcdClusters (and, apart, EtcdBackups) are reconciled at once, so a cluster whose etcd is slow to answer does not hold up the others; one cluster is never reconciled twice at once.")
	fs.StringVar(&o.seedImage, "seed-image", "",
		"Image whose etcd-operator binary copies a survivor's data into the first member of a cluster recovered from it (annotation etcd.database.coreos.com/recover-quorum-from-survivor; default: the image of the operator's own pod, read at start).")
	bindUnsafeFlags(fs, &o)
	o.coreos.bind(fs)
	zapOpts := &zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	if o.coreos.printVersion {
		return o, zapOpts, nil
	}
	o.withoutEffect = givenWithoutEffect(fs)
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["listen-addr"] {
		if given["metrics-bind-address"] {
			return o, nil, errors.New("--listen-addr and --metrics-bind-address set the same address: give one")
		}
		o.metricsAddr = o.coreos.listenAddr
	}
	if o.metricsAddr == "" {
		o.metricsAddr = metricsLoopback
		if o.metricsCertDir != "" {
			o.metricsAddr = metricsEveryInterface
		}
	}
	if err := o.watchFromEnv(given); err != nil {
		return o, nil, err
	}
	o.podName = firstEnv("POD_NAME", envCoreosPodName)
	o.servableCheck = defaultServableCheck
	if o.workers < 1 {
		return o, nil, errors.New("--max-concurrent-reconciles must be at least 1")
	}
	if o.notRunningDeadline <= 0 {
		return o, nil, errors.New("--member-not-running-deadline must be positive")
	}
	if !o.clusterWide && o.namespace == "" {
		return o, nil, errors.New("--namespace is required (or set POD_NAMESPACE or MY_POD_NAMESPACE), unless --cluster-wide is given")
	}
	if o.leaderElectionNamespace == "" {
		o.leaderElectionNamespace = firstEnv("POD_NAMESPACE", envCoreosNamespace)
	}
	if o.leaderElectionNamespace == "" {
		o.leaderElectionNamespace = o.namespace
	}
	if o.leaderElect && o.leaderElectionNamespace == "" {
		return o, nil, errors.New("--leader-elect needs --leader-election-namespace (or POD_NAMESPACE)")
	}
	return o, zapOpts, nil
}

// Where /metrics is served unless --metrics-bind-address (or coreos'
// --listen-addr) says otherwise. Plain HTTP stays on loopback: the metrics
// name every cluster and namespace the operator manages, and anyone who
// reaches the pod could read them. Over TLS (--metrics-cert-dir) it listens
// on every interface, for a scraper in the cluster.
const (
	metricsLoopback       = "127.0.0.1:8080"
	metricsEveryInterface = ":8080"
)

// metricsOptions is where and how /metrics (and, where coreos served it,
// /readyz) is served.
func metricsOptions(o options) metricsserver.Options {
	return metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.metricsCertDir != "",
		CertDir:       o.metricsCertDir,
		// /readyz there too, where coreos etcd-operator served it (--listen-addr).
		ExtraHandlers: map[string]http.Handler{"/readyz": healthz.CheckHandler{Checker: healthz.Ping}},
	}
}

// leaderElectionID names the Lease the replicas elect their leader with.
const leaderElectionID = "etcd-operator.etcd.database.coreos.com"

// envWatchNamespace is where Operator Lifecycle Manager's convention puts
// the namespaces an operator is to watch (the OperatorGroup's targets, from
// the pod's olm.targetNamespaces annotation): one namespace, or "" for all.
const envWatchNamespace = "WATCH_NAMESPACE"

// watchFromEnv fills in the watched namespace when no flag chose it: from
// $WATCH_NAMESPACE where it is set (empty: every namespace, as
// --cluster-wide), else from the pod's own namespace.
func (o *options) watchFromEnv(given map[string]bool) error {
	if given["namespace"] || o.clusterWide {
		return nil
	}
	watch, set := os.LookupEnv(envWatchNamespace)
	switch {
	case !set:
		o.namespace = firstEnv("POD_NAMESPACE", envCoreosNamespace)
	case watch == "":
		o.clusterWide = true
	case strings.Contains(watch, ","):
		return fmt.Errorf("$%s=%q names several namespaces; the operator watches one namespace or all of them "+
			"(with OLM: an OperatorGroup of one target namespace, or of all)", envWatchNamespace, watch)
	default:
		o.namespace = watch
	}
	return nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "seed" {
		os.Exit(runSeed(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "backup" {
		os.Exit(runBackup(os.Args[2:], os.Stdout))
	}
	if _, ok := companionOf(os.Args[0]); ok {
		os.Exit(runCompanion(ctrl.SetupSignalHandler(), os.Args[0], os.Args[1:], os.Stderr, zap.New()))
	}
	tuneGC()
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
	if o.coreos.printVersion {
		printVersion()
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), gates, o); err != nil {
		ctrl.Log.Error(err, "operator stopped")
		os.Exit(1)
	}
}

// run serves until ctx ends.
func run(ctx context.Context, restCfg *rest.Config, gates *kubecompat.Gates, o options) error {
	log := ctrl.Log.WithName("setup")
	// Which build runs shows in the log across an operator upgrade.
	log.Info("starting", "version", buildVersion())
	server, adaptations, err := gates.AdaptTo(restCfg)
	if err != nil {
		return err
	}
	for _, a := range adaptations {
		log.Info("adapting to an old API server: "+a, "kubernetes", server.GitVersion)
	}
	if why := server.NoDryRun(); why != "" {
		log.Info("adapting to an old API server: new members' pods are not checked with a dry run before their learner is added: "+why,
			"kubernetes", server.GitVersion)
	}
	if len(o.withoutEffect) > 0 {
		log.Info("flags of coreos etcd-operator v0.9.4 accepted, with no effect here", "flags", o.withoutEffect)
	}
	access, err := kubecompat.NewAccess(restCfg)
	if err != nil {
		return err
	}
	g, err := fitGrant(ctx, restCfg, access, o, log)
	if err != nil {
		return err
	}
	if o.createCRD {
		if err := installCRD(ctx, restCfg, access, g, log); err != nil {
			return err
		}
	}
	if err := g.fitBackups(ctx, access, log); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(etcdv1beta2.AddToScheme(scheme))

	// Nothing reads the cached objects' managedFields (patches are merge
	// patches computed from two copies that both lack them): dropping them
	// saves a large part of each cached object.
	cacheOpts := cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	if !o.clusterWide {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.namespace: {}}
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          g.leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// Set only where the API server serves no v1 Leases (see fitGrant).
		LeaderElectionResourceLockInterface: g.leaseLock,
		// Leadership is handed over at shutdown so a rollout does not wait for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.skipNameValidation},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if o.unsafe != (plan.Options{}) || o.unsafeMembers != (desired.Unsafe{}) {
		log.Info("UNSAFE test-only behaviour is on; never run this in production",
			"skipDeadMemberRemoval", o.unsafe.SkipDeadMemberRemoval, "upgradeAllAtOnce", o.unsafe.UpgradeAllAtOnce, "restartBeforeRejoin", o.unsafe.RestartBeforeRejoin, "replaceUnanswering", o.unsafe.ReplaceUnanswering, "leaveNoSpace", o.unsafe.LeaveNoSpace,
			"rebootstrapAfterQuorumLoss", o.unsafe.RebootstrapAfterQuorumLoss, "restoreWithoutData", o.unsafe.RestoreWithoutData,
			"bootstrapBesideClaims", o.unsafe.BootstrapBesideClaims, "restoreUnchecked", o.unsafe.RestoreUnchecked,
			"omitCurrentVersion", o.unsafe.OmitCurrentVersion, "budgetFromSize", o.unsafe.BudgetFromSize, "silent", o.unsafe.Silent,
			"leavePVCOnDelete", o.unsafeMembers.LeavePVCOnDelete, "shellProbe", o.unsafeMembers.ShellProbe)
	}
	r := &controller.Reconciler{
		Client:  mgr.GetClient(),
		Dial:    etcdadmin.Dial,
		Options: o.unsafe,
		Unsafe:  o.unsafeMembers,

		NotRunningDeadline:      o.notRunningDeadline,
		NoDryRun:                server.NoDryRun(),
		MaxConcurrentReconciles: o.workers,
		SeedImage:               seedImage(ctx, restCfg, o, log),

		WithoutDisruptionBudget: g.noDisruptionBudget,
		WithoutEviction:         g.noEviction,
		StatusWithObject:        g.statusWithObject,
		Restores:                g.noRestores == "",
		RestoreStatusWithObject: g.restoreStatusWithObject,
	}
	if o.dial != nil {
		r.Dial = o.dial
	}
	// Events use events.k8s.io/v1 (Kubernetes 1.19+) where allowed, else core/v1.
	switch g.events {
	case kubecompat.EventsV1:
		r.Recorder = mgr.GetEventRecorder("etcd-operator")
	case kubecompat.CoreEvents:
		//nolint:staticcheck // core/v1 Events on purpose: events.k8s.io is not served or not allowed.
		r.Recorder = kubecompat.CoreRecorder{Recorder: mgr.GetEventRecorderFor("etcd-operator")}
	default:
		r.EventsOff = g.eventsWhy
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	if g.noBackups == "" {
		backups := &controller.BackupReconciler{Client: mgr.GetClient(), Image: r.SeedImage, StatusWithObject: g.backupStatusWithObject,
			MaxConcurrentReconciles: o.workers, Recorder: r.Recorder}
		if err := backups.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the backup controller: %w", err)
		}
	}
	if later := g.notServed(); len(later) > 0 {
		if err := mgr.Add(servableLater{access: access, namespace: g.watched, resources: later, interval: o.servableCheck}); err != nil {
			return fmt.Errorf("adding the check for kinds served later: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	log.Info("starting", "namespace", o.namespace, "clusterWide", o.clusterWide, "leaderElect", g.leaderElect, "pod", o.podName)
	return mgr.Start(ctx)
}
