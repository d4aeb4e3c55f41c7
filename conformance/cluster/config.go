// Package cluster is the only code that touches kind: it creates, reuses,
// loads images into and deletes the kind clusters the suite runs on, through
// kind's Go API, and exposes each step as an e2e-framework env.Func.
package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	kindconfigs "github.com/etcdproof/etcdproof/kind-configs"
)

// Spec is what a cluster is made of. Its zero values are kind's defaults
// (one control-plane node, kind's own pod network).
type Spec struct {
	// Name is the kind cluster's name; its kubeconfig context is kind-<Name>.
	Name string
	// NodeImage is the kind node image, e.g. kindest/node:v1.34.11 or
	// etcdproof/kind-node:v1.16.15 (built here).
	NodeImage string
	// KubernetesVersion is the release the node image runs. Empty: read
	// from NodeImage's tag.
	KubernetesVersion string
	// Workers is the number of worker nodes beside the control plane
	// (node-loss needs one per member).
	Workers int
	// KubeRouterImage, when set, replaces kind's pod network (kindnetd,
	// which offline node images do not have) with kube-router.
	KubeRouterImage string
	// RegistryMirror, when set, is a registry (host:port, plain HTTP, as the
	// nodes reach it) that the nodes' containerd asks first for docker.io
	// images. Offline, a pod whose image is pulled every time
	// (imagePullPolicy Always, or an untagged image) can start only from
	// there: an image loaded into the node is not enough.
	RegistryMirror string
	// DNSImageTag, when set, is the CoreDNS image tag kubeadm deploys in
	// place of its own: a node image may hold another CoreDNS than the one
	// its kubeadm lists (offline 1.15 nodes hold 1.6.2; 1.3.1 cannot be built).
	DNSImageTag string
	// Dir holds the cluster's files: kubeconfig, audit policy and audit log.
	Dir string
}

// KubeconfigPath is where the cluster's kubeconfig is written.
func (s Spec) KubeconfigPath() string { return filepath.Join(s.Dir, "kubeconfig") }

// AuditDir is the host folder receiving the API server's audit.log.
func (s Spec) AuditDir() string { return filepath.Join(s.Dir, "audit") }

// AuditLog is the API server's audit log, readable from the host.
func (s Spec) AuditLog() string { return filepath.Join(s.AuditDir(), "audit.log") }

func (s Spec) auditPolicyPath() string { return filepath.Join(s.Dir, "audit-policy.yaml") }

// registryHostsDir is the host folder every node mounts as containerd's
// registry configuration (hosts.toml per registry).
func (s Spec) registryHostsDir() string { return filepath.Join(s.Dir, "containerd-certs.d") }

// Context is the kubeconfig context kind gives the cluster.
func (s Spec) Context() string { return "kind-" + s.Name }

var (
	validName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	imageTag  = regexp.MustCompile(`:(v1\.[0-9]+\.[0-9]+)(@|$)`)
)

// Validate says what is wrong with s, for a user to fix.
func (s Spec) Validate() error {
	if !validName.MatchString(s.Name) {
		return fmt.Errorf("cluster name %q: want lower-case letters, digits, '.' and '-' (a kind cluster name)", s.Name)
	}
	if s.Dir == "" {
		return fmt.Errorf("cluster %s: no folder for its kubeconfig and audit log", s.Name)
	}
	if s.Workers < 0 {
		return fmt.Errorf("cluster %s: %d workers", s.Name, s.Workers)
	}
	if s.NodeImage == "" {
		return fmt.Errorf("cluster %s: no node image (build one with make cluster, or pass a kindest/node image)", s.Name)
	}
	_, err := s.version()
	return err
}

// version is the Kubernetes release of the nodes.
func (s Spec) version() (*version.Version, error) {
	v := s.KubernetesVersion
	if v == "" {
		m := imageTag.FindStringSubmatch(s.NodeImage)
		if m == nil {
			return nil, fmt.Errorf("node image %q has no v1.X.Y tag: say which Kubernetes release it runs", s.NodeImage)
		}
		v = m[1]
	}
	parsed, err := version.ParseGeneric(v)
	if err != nil {
		return nil, fmt.Errorf("Kubernetes version %q: %w", v, err)
	}
	return parsed, nil
}

// kubeadmV1Beta2Before is the first release whose kubeadm config kind writes
// as v1beta3; older releases read v1beta2, and a patch must say so to apply.
var kubeadmV1Beta2Before = version.MustParseGeneric("v1.23.0")

// kubeadmV1Beta2From is the first release whose kubeadm reads v1beta2.
// kubeadm 1.13 and 1.14 read v1beta1, whose fields kind's v1beta2 template
// uses are the same: a JSON patch on each node relabels those documents.
// Older kubeadm reads v1alpha3 (1.12) or v1alpha2 (1.11), laid out otherwise.
var (
	kubeadmV1Beta2From = version.MustParseGeneric("v1.15.0")
	kubeadmV1Beta1From = version.MustParseGeneric("v1.13.0")
)

// kubeadmV1Beta1Patches relabel kind's v1beta2 kubeadm documents as v1beta1.
// They go on each node, after its own patches, which still match v1beta2.
func kubeadmV1Beta1Patches() []v1alpha4.PatchJSON6902 {
	var patches []v1alpha4.PatchJSON6902
	for _, kind := range []string{"ClusterConfiguration", "InitConfiguration", "JoinConfiguration"} {
		patches = append(patches, v1alpha4.PatchJSON6902{
			Group: "kubeadm.k8s.io", Version: "v1beta2", Kind: kind,
			Patch: `[{"op": "replace", "path": "/apiVersion", "value": "kubeadm.k8s.io/v1beta1"}]`,
		})
	}
	return patches
}

// kubeletFailsOnCgroupV1From is the first release whose kubelet refuses to
// start on a cgroup v1 host unless its configuration says failCgroupV1:
// false (KEP-5573); kind v0.33 does not say it. Many CI hosts and this
// project's own still run cgroup v1, where such a kubelet otherwise exits
// with "kubelet is configured to not run on a host using cgroup v1".
var kubeletFailsOnCgroupV1From = version.MustParseGeneric("v1.35.0")

// cgroupV1Patch keeps a kubelet of kubeletFailsOnCgroupV1From or later
// running on a cgroup v1 host; on cgroup v2 it changes nothing.
const cgroupV1Patch = "kind: KubeletConfiguration\nfailCgroupV1: false\n"

// KindConfig is the kind configuration of s: every API request audited at
// Metadata level into AuditLog (the rbac check reads it), workers, and
// kind's pod network left out where kube-router replaces it.
func (s Spec) KindConfig() (*v1alpha4.Cluster, error) {
	v, err := s.version()
	if err != nil {
		return nil, err
	}
	if err := kindWritesKubeadmFor(v); err != nil {
		return nil, err
	}
	apiVersionLine := ""
	if v.LessThan(kubeadmV1Beta2Before) {
		apiVersionLine = "apiVersion: kubeadm.k8s.io/v1beta2\n"
	}
	controlPlane := v1alpha4.Node{
		Role: v1alpha4.ControlPlaneRole,
		ExtraMounts: []v1alpha4.Mount{
			{HostPath: s.auditPolicyPath(), ContainerPath: "/etc/kubernetes/audit/policy.yaml", Readonly: true},
			{HostPath: s.AuditDir(), ContainerPath: "/var/log/kubernetes/audit"},
		},
		KubeadmConfigPatches: []string{"kind: ClusterConfiguration\n" + apiVersionLine + auditPatch + dnsPatch(s.DNSImageTag)},
	}
	cfg := &v1alpha4.Cluster{
		TypeMeta:   v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:       s.Name,
		Nodes:      []v1alpha4.Node{controlPlane},
		Networking: v1alpha4.Networking{DisableDefaultCNI: s.KubeRouterImage != ""},
	}
	if !v.LessThan(kubeletFailsOnCgroupV1From) {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, cgroupV1Patch)
	}
	for range s.Workers {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	if v.LessThan(kubeadmV1Beta2From) {
		for i := range cfg.Nodes {
			cfg.Nodes[i].KubeadmConfigPatchesJSON6902 = kubeadmV1Beta1Patches()
		}
	}
	if s.RegistryMirror != "" {
		// containerd reads hosts.toml files at each pull: the mirror may
		// start after the nodes do.
		cfg.ContainerdConfigPatches = []string{registryConfigPathPatch}
		for i := range cfg.Nodes {
			cfg.Nodes[i].ExtraMounts = append(cfg.Nodes[i].ExtraMounts,
				v1alpha4.Mount{HostPath: s.registryHostsDir(), ContainerPath: containerdHostsDir, Readonly: true})
		}
	}
	return cfg, nil
}

// containerdHostsDir is where containerd looks for hosts.toml files once
// registryConfigPathPatch points it there (kind's nodes do not by default).
const containerdHostsDir = "/etc/containerd/certs.d"

// registryConfigPathPatch is in kind's containerd config format (version 2),
// which containerd 1.6 reads as is and 2.x migrates.
const registryConfigPathPatch = `[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "` + containerdHostsDir + `"
`

// mirrorHostsTOML sends docker.io pulls to mirror first; what the mirror
// lacks still comes from Docker Hub when the machine is online.
func mirrorHostsTOML(mirror string) string {
	return `server = "https://registry-1.docker.io"

[host."http://` + mirror + `"]
  capabilities = ["pull", "resolve"]
`
}

// dnsPatch tells kubeadm (ClusterConfiguration) which CoreDNS image tag to
// deploy; "" leaves kubeadm's own.
func dnsPatch(tag string) string {
	if tag == "" {
		return ""
	}
	return "dns:\n  imageTag: \"" + tag + "\"\n"
}

// auditPatch turns on the API server's audit log (kubeadm ClusterConfiguration).
const auditPatch = `apiServer:
  extraArgs:
    audit-policy-file: /etc/kubernetes/audit/policy.yaml
    audit-log-path: /var/log/kubernetes/audit/audit.log
    audit-log-format: json
  extraVolumes:
    - name: audit-policy
      hostPath: /etc/kubernetes/audit/policy.yaml
      mountPath: /etc/kubernetes/audit/policy.yaml
      readOnly: true
      pathType: File
    - name: audit-log
      hostPath: /var/log/kubernetes/audit
      mountPath: /var/log/kubernetes/audit
      pathType: DirectoryOrCreate
`

// writeHostFiles puts the audit policy where the node mounts it, starts an
// empty audit log folder (a new cluster starts a new log) and writes the
// registry mirror's hosts.toml.
func (s Spec) writeHostFiles() error {
	if err := os.RemoveAll(s.AuditDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(s.AuditDir(), 0o755); err != nil {
		return err
	}
	if s.RegistryMirror != "" {
		dockerHub := filepath.Join(s.registryHostsDir(), "docker.io")
		if err := os.MkdirAll(dockerHub, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dockerHub, "hosts.toml"), []byte(mirrorHostsTOML(s.RegistryMirror)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(s.auditPolicyPath(), kindconfigs.AuditPolicy, 0o644)
}
