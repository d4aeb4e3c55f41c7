package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/etcdproof/etcdproof/conformance/cluster"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

const clusterUsage = `usage: etcdproof cluster up|down|load|build-node-image [flags] [images...]

  up                create the kind cluster (or reuse it when it answers), with
                    its add-ons, and wait until it is ready; --preflight-only
                    only checks that this host can run the release
  down              delete the cluster, its kubeconfig and audit log
  load              copy images from the local Docker daemon into the cluster's nodes
  build-node-image  build a kind node image from a Kubernetes server tarball
                    (--server-tarball, --base-image, --image)

Needs Docker and, for up, a kind node image; not the kind binary.
`

// clusterFlags are the flags that say which cluster, shared by `cluster`
// and `run --cluster create`.
type clusterFlags struct {
	spec cluster.Spec
}

// register adds the flags; nameFlag is "name" for `cluster`, "cluster-name"
// for `run`.
func (f *clusterFlags) register(fs *flag.FlagSet, nameFlag string) {
	fs.StringVar(&f.spec.Name, nameFlag, "etcdproof", "kind cluster name (its kubeconfig context is kind-<name>)")
	fs.StringVar(&f.spec.NodeImage, "node-image", "", "kind node image, e.g. etcdproof/kind-node:v1.34.4 (built by make cluster) or kindest/node:v1.34.11")
	fs.StringVar(&f.spec.KubernetesVersion, "kubernetes-version", "", "Kubernetes release of the node image (default: its v1.X.Y tag)")
	fs.IntVar(&f.spec.Workers, "workers", 0, "worker nodes beside the control plane (node-loss needs one per member)")
	fs.StringVar(&f.spec.KubeRouterImage, "kube-router-image", "", "run kube-router from this image as the pod network instead of kind's (offline node images have no kindnetd)")
	fs.StringVar(&f.spec.DNSImageTag, "dns-image-tag", "", "CoreDNS image tag kubeadm deploys, where the node image holds another CoreDNS than kubeadm's own (offline 1.15 node images: 1.6.2)")
	fs.StringVar(&f.spec.RegistryMirror, "registry-mirror", "", "host:port of a plain-HTTP registry the nodes pull docker.io images from first (images pulled on every start need one offline)")
	fs.StringVar(&f.spec.Dir, "cluster-dir", "", "folder for the kubeconfig and audit log (default $ETCDPROOF_CACHE/clusters/<name>)")
}

// resolve fills the defaults that depend on other flags.
func (f *clusterFlags) resolve() {
	if f.spec.Dir == "" {
		f.spec.Dir = filepath.Join(cacheDir(), "clusters", f.spec.Name)
	}
}

// cacheDir is where etcdproof keeps build outputs and cluster files,
// $ETCDPROOF_CACHE or the user's cache folder, as the scripts do.
func cacheDir() string {
	if d := os.Getenv("ETCDPROOF_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "etcdproof")
	}
	return filepath.Join(os.TempDir(), "etcdproof")
}

func clusterCmd(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "build-node-image" {
		return buildNodeImageCmd(args[1:], stderr)
	}
	if len(args) == 0 || (args[0] != "up" && args[0] != "down" && args[0] != "load") {
		fmt.Fprint(stderr, clusterUsage)
		return runner.ExitCouldNot
	}
	sub := args[0]
	fs := flag.NewFlagSet("cluster "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f clusterFlags
	f.register(fs, "name")
	var preflightOnly bool
	if sub == "up" {
		fs.BoolVar(&preflightOnly, "preflight-only", false, "only check that this host can make a cluster of the release (the oldest release kind reaches;\nbefore 1.19, a cgroup v1 host) and exit; needs no node image: make cluster asks before it builds one")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return runner.ExitCouldNot
	}
	f.resolve()
	k := cluster.NewKind(f.spec)
	var err error
	switch sub {
	case "up":
		if fs.NArg() > 0 {
			err = fmt.Errorf("cluster up takes no arguments, got %v", fs.Args())
			break
		}
		if preflightOnly {
			err = f.spec.Preflight(ctx)
			break
		}
		// Up runs the same preflight before it creates anything.
		_, err = cluster.Up(k)(ctx, envconf.New())
		if err == nil {
			fmt.Fprintf(stderr, "cluster %s is ready\n  context:     %s\n  kubeconfig:  %s\n  audit log:   %s\n",
				f.spec.Name, f.spec.Context(), f.spec.KubeconfigPath(), f.spec.AuditLog())
		}
	case "down":
		err = k.Destroy(ctx)
	case "load":
		if fs.NArg() == 0 {
			err = errors.New("cluster load needs the images to load")
			break
		}
		err = k.LoadImage(ctx, fs.Arg(0), fs.Args()[1:]...)
	}
	if err != nil {
		fmt.Fprintf(stderr, "etcdproof cluster %s: %v\n", sub, err)
		return runner.ExitCouldNot
	}
	return 0
}

// buildNodeImageCmd is `etcdproof cluster build-node-image`: the offline
// substrate's node image (scripts/build-node-image.sh prepares its inputs).
func buildNodeImageCmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("cluster build-node-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var n cluster.NodeImage
	fs.StringVar(&n.ServerTarball, "server-tarball", "", "kubernetes-server-linux-amd64.tar.gz to build from")
	fs.StringVar(&n.BaseImage, "base-image", "", "kind base image the node starts from")
	fs.StringVar(&n.Image, "image", "", "tag of the node image to build")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return runner.ExitCouldNot
	}
	if err := cluster.BuildNodeImage(n); err != nil {
		fmt.Fprintf(stderr, "etcdproof cluster build-node-image: %v\n", err)
		return runner.ExitCouldNot
	}
	return 0
}
