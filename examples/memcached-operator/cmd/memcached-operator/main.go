// Command memcached-operator runs the Memcached controller of the example
// operator: flags → manager → controller, as Operator SDK lays out main.
package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
	"github.com/etcdproof/etcdproof/examples/memcached-operator/internal/controller"
)

const (
	// envWatchNamespace is where OLM puts the namespaces the operator is to
	// watch (the OperatorGroup's targets, from the pod's
	// olm.targetNamespaces annotation): "" for all, else a comma-separated
	// list.
	envWatchNamespace = "WATCH_NAMESPACE"
	// envPodNamespace is the operator's own namespace, which the plain
	// install (config/manager) hands it: the one its Role is granted in.
	envPodNamespace = "POD_NAMESPACE"
	// envMemcachedImage names the memcached image in the manager's
	// Deployment, where the bundle generator lists it among the CSV's
	// relatedImages (Operator SDK's RELATED_IMAGE_ convention), so a
	// mirror for a disconnected cluster knows to copy it.
	envMemcachedImage = "RELATED_IMAGE_MEMCACHED"
)

// version names the build in the log, so an upgrade shows which runs; set
// with -ldflags "-X main.version=v2".
var version = "devel"

func main() {
	var metricsAddr, probeAddr, image string
	var leaderElect bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address of the /metrics endpoint (0 disables it).")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	flag.BoolVar(&leaderElect, "leader-elect", false,
		"Elect a leader with a Lease in the operator's namespace, so that only one replica acts.")
	flag.StringVar(&image, "memcached-image", envOr(envMemcachedImage, controller.DefaultImage),
		"Image of the memcached pods; $"+envMemcachedImage+", where set, is the default.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	namespaces, err := watchedNamespaces(os.LookupEnv)
	if err != nil {
		log.Error(err, "choosing the namespaces to watch")
		os.Exit(2)
	}
	log.Info("starting", "version", version, "namespaces", namespaces, "memcachedImage", image)

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1alpha1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  controller.CacheOptions(namespaces),
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "memcached-operator.cache.example.com",
		// Leadership is handed over at shutdown, so an upgrade's new pod
		// does not wait for the Lease to expire.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "creating the manager")
		os.Exit(1)
	}
	if err := (&controller.MemcachedReconciler{Client: mgr.GetClient(), Image: image}).SetupWithManager(mgr); err != nil {
		log.Error(err, "creating the controller")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "adding the health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "adding the readiness check")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}

// watchedNamespaces are the namespaces to watch, none meaning every
// namespace: $WATCH_NAMESPACE where it is set, as OLM sets it ("" for all,
// one namespace, or several separated by commas); else the operator's own
// namespace, $POD_NAMESPACE; else (run from a workstation against a
// kubeconfig) every namespace.
func watchedNamespaces(lookupEnv func(string) (string, bool)) ([]string, error) {
	watch, set := lookupEnv(envWatchNamespace)
	if !set {
		if own, _ := lookupEnv(envPodNamespace); own != "" {
			return []string{own}, nil
		}
		return nil, nil
	}
	var namespaces []string
	for ns := range strings.SplitSeq(watch, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	if len(namespaces) == 0 && strings.TrimSpace(watch) != "" {
		return nil, errors.New("$" + envWatchNamespace + "=" + watch + " names no namespace")
	}
	return namespaces, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
