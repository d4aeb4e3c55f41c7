package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

func TestKindConfig(t *testing.T) {
	tests := []struct {
		name        string
		spec        Spec
		nodes       int
		noCNI       bool
		kubeadmV1B2 bool
		// cgroupV1 is whether kubelets are told they may run on cgroup v1.
		cgroupV1 bool
	}{
		{"current release, kind's network", Spec{Name: "etcdproof", NodeImage: "kindest/node:v1.34.11@sha256:44e2", Dir: "/c"}, 1, false, false, false},
		{"three workers, kube-router", Spec{Name: "nodes", NodeImage: "etcdproof/kind-node:v1.34.4", Workers: 3, KubeRouterImage: "etcdproof/kube-router:v2.1.0", Dir: "/c"}, 4, true, false, false},
		{"1.16 reads kubeadm v1beta2", Spec{Name: "old", NodeImage: "etcdproof/kind-node:v1.16.15", KubeRouterImage: "k", Dir: "/c"}, 1, true, true, false},
		{"1.37 kubelets may run on cgroup v1", Spec{Name: "new", NodeImage: "etcdproof/kind-node:v1.37.2", Workers: 1, KubeRouterImage: "k", Dir: "/c"}, 2, true, false, true},
		{"version flag wins over the tag", Spec{Name: "x", NodeImage: "my/node:latest", KubernetesVersion: "v1.22.17", Dir: "/c"}, 1, false, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spec.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			cfg, err := tc.spec.KindConfig()
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Nodes) != tc.nodes || cfg.Nodes[0].Role != v1alpha4.ControlPlaneRole {
				t.Errorf("nodes = %+v, want %d with the control plane first", cfg.Nodes, tc.nodes)
			}
			if cfg.Networking.DisableDefaultCNI != tc.noCNI {
				t.Errorf("DisableDefaultCNI = %v, want %v", cfg.Networking.DisableDefaultCNI, tc.noCNI)
			}
			patch := strings.Join(cfg.Nodes[0].KubeadmConfigPatches, "\n")
			if got := strings.Contains(patch, "kubeadm.k8s.io/v1beta2"); got != tc.kubeadmV1B2 {
				t.Errorf("patch names v1beta2: %v, want %v:\n%s", got, tc.kubeadmV1B2, patch)
			}
			if !strings.Contains(patch, "audit-log-path: /var/log/kubernetes/audit/audit.log") {
				t.Errorf("no audit log in the kubeadm patch:\n%s", patch)
			}
			// Cluster-wide, so the kubelet of every node, workers too, gets it.
			if got := strings.Contains(strings.Join(cfg.KubeadmConfigPatches, "\n"), "failCgroupV1: false"); got != tc.cgroupV1 {
				t.Errorf("failCgroupV1: false in the cluster's patches: %v, want %v", got, tc.cgroupV1)
			}
			mounts := cfg.Nodes[0].ExtraMounts
			if len(mounts) != 2 || mounts[1].HostPath != tc.spec.AuditDir() {
				t.Errorf("mounts = %+v, want the audit policy and %s", mounts, tc.spec.AuditDir())
			}
		})
	}
}

// A pull of a docker.io image (imagePullPolicy Always: coreos' restore) goes
// to the mirror on every node, control plane and workers alike.
func TestKindConfigSendsDockerHubPullsToTheMirror(t *testing.T) {
	spec := Spec{Name: "m", NodeImage: "etcdproof/kind-node:v1.34.4", Workers: 2, RegistryMirror: "etcdproof-registry:5000", Dir: t.TempDir()}
	cfg, err := spec.KindConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.ContainerdConfigPatches) != 1 || !strings.Contains(cfg.ContainerdConfigPatches[0], `config_path = "/etc/containerd/certs.d"`) {
		t.Errorf("containerd patches = %q, want config_path set", cfg.ContainerdConfigPatches)
	}
	for i, n := range cfg.Nodes {
		found := false
		for _, m := range n.ExtraMounts {
			found = found || (m.ContainerPath == "/etc/containerd/certs.d" && m.HostPath == spec.registryHostsDir())
		}
		if !found {
			t.Errorf("node %d (%s) does not mount the registry hosts folder: %+v", i, n.Role, n.ExtraMounts)
		}
	}
	if err := spec.writeHostFiles(); err != nil {
		t.Fatal(err)
	}
	hosts, err := os.ReadFile(filepath.Join(spec.registryHostsDir(), "docker.io", "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hosts), `[host."http://etcdproof-registry:5000"]`) {
		t.Errorf("docker.io/hosts.toml does not name the mirror:\n%s", hosts)
	}

	spec.RegistryMirror = ""
	cfg, err = spec.KindConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.ContainerdConfigPatches) != 0 || len(cfg.Nodes[1].ExtraMounts) != 0 {
		t.Errorf("without a mirror: patches %q, worker mounts %+v; want none", cfg.ContainerdConfigPatches, cfg.Nodes[1].ExtraMounts)
	}
}

func TestSpecValidateExplains(t *testing.T) {
	good := Spec{Name: "etcdproof", NodeImage: "kindest/node:v1.34.11", Dir: "/c"}
	tests := []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"upper-case name", func(s *Spec) { s.Name = "Etcd" }, "kind cluster name"},
		{"no node image", func(s *Spec) { s.NodeImage = "" }, "no node image"},
		{"untagged image without a version", func(s *Spec) { s.NodeImage = "my/node" }, "say which Kubernetes release"},
		{"bad version", func(s *Spec) { s.KubernetesVersion = "one.two" }, `Kubernetes version "one.two"`},
		{"negative workers", func(s *Spec) { s.Workers = -1 }, "-1 workers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.mod(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A 1.15 node image holds CoreDNS 1.6.2, not the 1.3.1 its kubeadm lists:
// the control plane's kubeadm configuration names the tag it holds, in the
// same ClusterConfiguration as the audit settings.
func TestKindConfigNamesTheCoreDNSTheNodeHolds(t *testing.T) {
	for _, tag := range []string{"", "1.6.2"} {
		spec := Spec{Name: "book", NodeImage: "etcdproof/kind-node:v1.15.12", KubeRouterImage: "k", DNSImageTag: tag, Dir: t.TempDir()}
		cfg, err := spec.KindConfig()
		if err != nil {
			t.Fatal(err)
		}
		var clusterConfig struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
			DNS        struct {
				ImageTag string `json:"imageTag"`
			} `json:"dns"`
			APIServer map[string]any `json:"apiServer"`
		}
		if err := yaml.UnmarshalStrict([]byte(cfg.Nodes[0].KubeadmConfigPatches[0]), &clusterConfig, yaml.DisallowUnknownFields); err != nil {
			t.Fatalf("the ClusterConfiguration patch does not parse: %v", err)
		}
		if clusterConfig.DNS.ImageTag != tag || clusterConfig.APIServer == nil || clusterConfig.APIVersion != "kubeadm.k8s.io/v1beta2" {
			t.Errorf("tag %q: patch %+v", tag, clusterConfig)
		}
	}
}

// kubeadm 1.13 and 1.14 read kubeadm.k8s.io/v1beta1: every node's kubeadm
// documents are relabelled, after the node's own patches (which name v1beta2,
// the version kind writes). Older releases are refused, saying why.
func TestKindConfigRelabelsKubeadmConfigForV1Beta1(t *testing.T) {
	spec := Spec{Name: "old", NodeImage: "etcdproof/kind-node:v1.14.10", Workers: 2, KubeRouterImage: "k", Dir: t.TempDir()}
	cfg, err := spec.KindConfig()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range cfg.Nodes {
		kinds := map[string]bool{}
		for _, p := range n.KubeadmConfigPatchesJSON6902 {
			if p.Group == "kubeadm.k8s.io" && p.Version == "v1beta2" && strings.Contains(p.Patch, `"value": "kubeadm.k8s.io/v1beta1"`) {
				kinds[p.Kind] = true
			}
		}
		if !kinds["ClusterConfiguration"] || !kinds["InitConfiguration"] || !kinds["JoinConfiguration"] {
			t.Errorf("node %d (%s) relabels %v, want the cluster, init and join configurations", i, n.Role, kinds)
		}
	}
	if !strings.Contains(cfg.Nodes[0].KubeadmConfigPatches[0], "apiVersion: kubeadm.k8s.io/v1beta2") {
		t.Errorf("the control plane's own patch must still match kind's v1beta2 document:\n%s", cfg.Nodes[0].KubeadmConfigPatches[0])
	}

	for _, image := range []string{"etcdproof/kind-node:v1.15.12", "etcdproof/kind-node:v1.34.4"} {
		spec.NodeImage = image
		cfg, err := spec.KindConfig()
		if err != nil {
			t.Fatal(err)
		}
		if p := cfg.Nodes[0].KubeadmConfigPatchesJSON6902; len(p) != 0 {
			t.Errorf("%s: relabelling patches %+v, want none", image, p)
		}
	}

	spec.NodeImage = "etcdproof/kind-node:v1.12.10"
	if _, err := spec.KindConfig(); err == nil || !strings.Contains(err.Error(), "v1.13.0 is the oldest") {
		t.Errorf("1.12: err = %v, want the oldest release named", err)
	}
}
