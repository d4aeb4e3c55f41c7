package cluster

import (
	"context"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	kindversion "sigs.k8s.io/kind/pkg/cmd/kind/version"
)

// KindVersion is the kind release whose Go API makes the clusters.
func KindVersion() string { return "v" + kindversion.Version() }

// Up creates (or reuses) k's cluster with its add-ons, waits until its
// nodes and system workloads are ready, and points the environment's
// kubeconfig at it. Later funcs find the provider by the cluster's name.
func Up(k *Kind) env.Func {
	return envfuncs.CreateCluster(k, k.Spec().Name)
}

// LoadImages copies images from the local Docker daemon into the nodes of
// the cluster that Up made.
func LoadImages(name string, images ...string) env.Func {
	if len(images) == 0 {
		return func(ctx context.Context, _ *envconf.Config) (context.Context, error) { return ctx, nil }
	}
	return envfuncs.LoadImageToCluster(name, images[0], images[1:]...)
}

// Down deletes the cluster that Up made, with its kubeconfig and audit log.
func Down(name string) env.Func {
	return envfuncs.DestroyCluster(name)
}
