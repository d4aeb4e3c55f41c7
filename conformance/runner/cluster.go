package runner

import (
	"context"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/etcdproof/etcdproof/conformance/cluster"
)

// ClusterMode says where a run's cluster comes from.
type ClusterMode string

const (
	// ClusterExisting runs on the cluster --kubeconfig and --context name.
	ClusterExisting ClusterMode = "existing"
	// ClusterCreate creates the kind cluster (or reuses it) and keeps it.
	ClusterCreate ClusterMode = "create"
	// ClusterCreateAndDestroy creates the kind cluster and deletes it after the run.
	ClusterCreateAndDestroy ClusterMode = "create-and-destroy"
)

// ClusterModes are the values --cluster accepts.
var ClusterModes = []ClusterMode{ClusterExisting, ClusterCreate, ClusterCreateAndDestroy}

// ParseClusterMode checks a --cluster value.
func ParseClusterMode(v string) (ClusterMode, error) {
	for _, m := range ClusterModes {
		if string(m) == v {
			return m, nil
		}
	}
	names := make([]string, len(ClusterModes))
	for i, m := range ClusterModes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("--cluster %q: want one of %s", v, strings.Join(names, ", "))
}

// provideCluster brings up the run's kind cluster when the mode asks for
// one, points o at it (kubeconfig, context, audit log) and loads images
// from the local Docker daemon into its nodes. The returned func deletes
// the cluster when the mode says so; it is never nil.
func provideCluster(ctx context.Context, o *Options, images []string) (func(), error) {
	noop := func() {}
	if o.Cluster == "" || o.Cluster == ClusterExisting {
		return noop, nil
	}
	spec := o.ClusterSpec
	k := cluster.NewKind(spec)
	cfg := envconf.New()
	ctx, err := cluster.Up(k)(ctx, cfg)
	if err != nil {
		return noop, fmt.Errorf("--cluster %s: %w", o.Cluster, err)
	}
	teardown := noop
	if o.Cluster == ClusterCreateAndDestroy {
		teardown = func() {
			// The run's context may be cancelled (Ctrl-C): delete anyway.
			if _, err := cluster.Down(spec.Name)(context.WithoutCancel(ctx), cfg); err != nil {
				fmt.Fprintf(os.Stderr, "etcdproof: %v\n", err)
			}
		}
	}
	o.Framework.Kubeconfig, o.Framework.Context, o.Framework.AuditLog = spec.KubeconfigPath(), spec.Context(), spec.AuditLog()
	if _, err := cluster.LoadImages(spec.Name, images...)(ctx, cfg); err != nil {
		teardown()
		return noop, err
	}
	return teardown, nil
}

// kindVersion is the kind release the suite drives clusters with, for the
// report's fingerprint when the cluster is a kind cluster.
func kindVersion(kubeContext string) string {
	if !strings.HasPrefix(kubeContext, "kind-") {
		return ""
	}
	return cluster.KindVersion()
}
