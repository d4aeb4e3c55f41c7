package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/support"
	kind "sigs.k8s.io/kind/pkg/cluster"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	loadimage "sigs.k8s.io/kind/pkg/cmd/kind/load/docker-image"
	"sigs.k8s.io/kind/pkg/log"
)

// Kind is an e2e-framework cluster provider on kind's Go API: it needs
// Docker and a node image, not the kind binary. Create reuses a cluster of
// the same name when it answers, so a warm machine skips the minute kind
// takes to boot one.
type Kind struct {
	spec     Spec
	provider *kind.Provider
	logger   log.Logger
	rest     *rest.Config
}

var _ support.E2EClusterProviderWithImageLoader = (*Kind)(nil)

// NewKind is a provider for spec's cluster; kind's progress lines go to stderr.
func NewKind(spec Spec) *Kind {
	logger := kindcmd.NewLogger()
	return &Kind{spec: spec, logger: logger, provider: kind.NewProvider(kind.ProviderWithLogger(logger), kind.ProviderWithDocker())}
}

// Spec is what the provider makes.
func (k *Kind) Spec() Spec { return k.spec }

// SetDefaults keeps the spec as given: Spec's zero values are kind's defaults.
func (k *Kind) SetDefaults() support.E2EClusterProvider { return k }

// WithName sets the cluster's name.
func (k *Kind) WithName(name string) support.E2EClusterProvider { k.spec.Name = name; return k }

// WithVersion sets the Kubernetes release of the node image.
func (k *Kind) WithVersion(v string) support.E2EClusterProvider {
	k.spec.KubernetesVersion = v
	return k
}

// WithPath is for providers that run a binary; this one runs none.
func (k *Kind) WithPath(string) support.E2EClusterProvider { return k }

// WithOpts applies e2e-framework cluster options.
func (k *Kind) WithOpts(opts ...support.ClusterOpts) support.E2EClusterProvider {
	for _, o := range opts {
		o(k)
	}
	return k
}

// Exists says whether kind knows a cluster of this name.
func (k *Kind) Exists() (bool, error) {
	names, err := k.provider.List()
	if err != nil {
		return false, fmt.Errorf("listing kind clusters (is Docker running?): %w", err)
	}
	return slices.Contains(names, k.spec.Name), nil
}

// Create makes the cluster, or reuses it when it exists and its API
// server answers; a cluster whose API server is gone (Docker restarted, a
// CI job ended) is deleted and made again. It returns the kubeconfig path.
func (k *Kind) Create(ctx context.Context, _ ...string) (string, error) {
	if err := k.spec.Validate(); err != nil {
		return "", err
	}
	if err := k.spec.Preflight(ctx); err != nil {
		return "", err
	}
	exists, err := k.Exists()
	if err != nil {
		return "", err
	}
	if exists {
		why := "its API server does not answer"
		if err := k.writeKubeconfig(); err == nil && k.answers(ctx) == nil {
			if why = k.lacksMirror(); why == "" {
				k.logger.V(0).Infof("Reusing cluster %q (make cluster-down to start over)", k.spec.Name)
				return k.spec.KubeconfigPath(), k.installAddons(ctx)
			}
		}
		k.logger.V(0).Infof("Cluster %q exists but %s: deleting it", k.spec.Name, why)
		if err := k.provider.Delete(k.spec.Name, ""); err != nil {
			return "", fmt.Errorf("deleting cluster %s: %w", k.spec.Name, err)
		}
	}
	cfg, err := k.spec.KindConfig()
	if err != nil {
		return "", err
	}
	if err := k.spec.writeHostFiles(); err != nil {
		return "", fmt.Errorf("cluster %s: audit files: %w", k.spec.Name, err)
	}
	// No wait for Ready: nodes without kind's pod network turn Ready only
	// once kube-router runs (installAddons below).
	if err := k.provider.Create(k.spec.Name,
		kind.CreateWithV1Alpha4Config(cfg),
		kind.CreateWithNodeImage(k.spec.NodeImage),
		kind.CreateWithDisplayUsage(false),
		kind.CreateWithDisplaySalutation(false),
	); err != nil {
		return "", fmt.Errorf("creating kind cluster %s from %s: %w", k.spec.Name, k.spec.NodeImage, err)
	}
	if err := k.writeKubeconfig(); err != nil {
		return "", err
	}
	return k.spec.KubeconfigPath(), k.installAddons(ctx)
}

// CreateWithConfig is Create: the config is built from the Spec, not read
// from a file.
func (k *Kind) CreateWithConfig(ctx context.Context, _ string) (string, error) {
	return k.Create(ctx)
}

// writeKubeconfig writes the cluster's kubeconfig to the spec's path (the
// suite reads that one) and loads it.
func (k *Kind) writeKubeconfig() error {
	raw, err := k.provider.KubeConfig(k.spec.Name, false)
	if err != nil {
		return fmt.Errorf("kubeconfig of cluster %s: %w", k.spec.Name, err)
	}
	if err := os.MkdirAll(k.spec.Dir, 0o755); err != nil {
		return err
	}
	tmp := k.spec.KubeconfigPath() + ".tmp"
	if err := os.WriteFile(tmp, []byte(raw), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, k.spec.KubeconfigPath()); err != nil {
		return err
	}
	k.rest, err = clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	return err
}

// lacksMirror says why an existing cluster cannot reuse the registry
// mirror the spec asks for ("" when it can): a cluster made before the
// mirror existed has no hosts.toml in its nodes, and containerd's
// config_path is read only when a node starts.
func (k *Kind) lacksMirror() string {
	if k.spec.RegistryMirror == "" {
		return ""
	}
	nodes, err := k.provider.ListNodes(k.spec.Name)
	if err != nil || len(nodes) == 0 {
		return fmt.Sprintf("its nodes cannot be listed (%v)", err)
	}
	hosts := containerdHostsDir + "/docker.io/hosts.toml"
	var out bytes.Buffer
	if err := nodes[0].Command("cat", hosts).SetStdout(&out).Run(); err != nil || !strings.Contains(out.String(), k.spec.RegistryMirror) {
		return "it was made without the registry mirror " + k.spec.RegistryMirror
	}
	return ""
}

// answers asks the API server for /readyz.
func (k *Kind) answers(ctx context.Context) error {
	cfg := rest.CopyConfig(k.rest)
	cfg.Timeout = readyzTimeout
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return c.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

// GetKubeconfig is the path Create wrote.
func (k *Kind) GetKubeconfig() string { return k.spec.KubeconfigPath() }

// GenerateKubeconfig writes the kubeconfig again and returns its path.
func (k *Kind) GenerateKubeconfig(...string) (string, error) {
	return k.spec.KubeconfigPath(), k.writeKubeconfig()
}

// GetKubectlContext is kind's context name for the cluster.
func (k *Kind) GetKubectlContext() string { return k.spec.Context() }

// ExportLogs writes every node's logs (kubelet, containerd, pods) under dest.
func (k *Kind) ExportLogs(_ context.Context, dest string) error {
	return k.provider.CollectLogs(k.spec.Name, dest)
}

// Destroy deletes the cluster and its files (kubeconfig, audit log).
func (k *Kind) Destroy(context.Context) error {
	if err := k.provider.Delete(k.spec.Name, k.spec.KubeconfigPath()); err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", k.spec.Name, err)
	}
	return os.RemoveAll(k.spec.Dir)
}

// WaitForControlPlane waits until the nodes are Ready and the system
// workloads (pod network, kube-proxy, CoreDNS, local-path storage) rolled out.
func (k *Kind) WaitForControlPlane(ctx context.Context, c klient.Client) error {
	return waitForSystem(ctx, c.Resources(), k.spec.KubeRouterImage != "")
}

// KubernetesRestConfig is the REST config of the cluster's admin.
func (k *Kind) KubernetesRestConfig() *rest.Config { return k.rest }

// LoadImage copies images from the local Docker daemon into every node
// that lacks them (kind's `load docker-image`, as a library).
func (k *Kind) LoadImage(ctx context.Context, image string, more ...string) error {
	images := append([]string{image}, more...)
	cmd := loadimage.NewCommand(k.logger, kindcmd.StandardIOStreams())
	cmd.SetArgs(append([]string{"--name", k.spec.Name}, images...))
	cmd.SilenceUsage = true
	if err := cmd.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("loading %v into cluster %s: %w", images, k.spec.Name, err)
	}
	return nil
}

// LoadImageArchive is not used: images are loaded from the Docker daemon.
func (k *Kind) LoadImageArchive(context.Context, string, ...string) error {
	return errors.New("loading image archives is not supported: load images from the Docker daemon")
}
