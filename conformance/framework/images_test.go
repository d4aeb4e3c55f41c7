package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

func TestNormalizeImage(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                                  "docker.io/library/busybox:latest",
		"busybox:1.28.0-glibc":                     "docker.io/library/busybox:1.28.0-glibc",
		"etcdproof/etcd-operator:dev":              "docker.io/etcdproof/etcd-operator:dev",
		"quay.io/coreos/etcd:v3.5.21":              "quay.io/coreos/etcd:v3.5.21",
		"quay.io/coreos/etcd":                      "quay.io/coreos/etcd:latest",
		"localhost:5000/etcd":                      "localhost:5000/etcd:latest",
		"localhost/etcd:v1":                        "localhost/etcd:v1",
		"ghcr.io/aenix-io/etcd-operator@sha256:ab": "ghcr.io/aenix-io/etcd-operator@sha256:ab",
	} {
		if got := NormalizeImage(in); got != want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

// Cases where the hand-written normaliser before distribution/reference
// differed: Docker Hub spelled with its host, and references no runtime
// would report.
func TestNormalizeImageEdgeCases(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct{ in, want string }{
		{"docker.io/busybox:1.28", "docker.io/library/busybox:1.28"},
		{"index.docker.io/library/busybox", "docker.io/library/busybox:latest"},
		{"docker.io/library/busybox:1.28", "docker.io/library/busybox:1.28"},
		{"busybox@" + digest, "docker.io/library/busybox@" + digest},
		{"busybox:1.28@" + digest, "docker.io/library/busybox:1.28@" + digest},
		{"registry.k8s.io/etcd:3.5.21-0", "registry.k8s.io/etcd:3.5.21-0"},
		{"[::1]:5000/etcd", "[::1]:5000/etcd:latest"},
		// Not references: left as they are.
		{"Busybox", "Busybox"},
		{"busybox:", "busybox:"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeImage(tt.in); got != tt.want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEtcdContainer(t *testing.T) {
	pod := func(images ...string) *corev1.Pod {
		p := &corev1.Pod{}
		for i, img := range images {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: img})
		}
		return p
	}
	tests := []struct {
		repo string
		pod  *corev1.Pod
		want string
	}{
		{"quay.io/coreos/etcd", pod("busybox:1.28", "quay.io/coreos/etcd:v3.5.21"), "c1"},
		{"quay.io/coreos/etcd", pod("quay.io/coreos/etcd:v3.5.21", "busybox"), "c0"},
		{"quay.io/coreos/etcd", pod("quay.io/coreos/etcd-operator:v0.9.4", "quay.io/coreos/etcd@sha256:"+strings.Repeat("0", 64)), "c1"},
		{"etcd", pod("sidecar", "docker.io/library/etcd:3.5"), "c1"},
		{"quay.io/coreos/etcd", pod("sidecar", "gcr.io/etcd-development/etcd:v3.5.21"), "c0"}, // none: the first
		{"", pod("sidecar", "quay.io/coreos/etcd:v3.5.21"), "c0"},
		{"quay.io/coreos/etcd", pod(), ""},
	}
	for _, tt := range tests {
		c := &EtcdCluster{env: &Env{Profile: &profile.Profile{Etcd: profile.Etcd{Repository: tt.repo}}}}
		if got := c.EtcdContainer(tt.pod); got != tt.want {
			t.Errorf("EtcdContainer(repository %q, %d containers) = %q, want %q", tt.repo, len(tt.pod.Spec.Containers), got, tt.want)
		}
	}
}

func TestImagesNotOnNodes(t *testing.T) {
	node := func(names ...string) corev1.Node {
		return corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: names}}}}
	}
	nodes := []corev1.Node{
		node("docker.io/library/busybox:1.28.0-glibc", "docker.io/library/busybox@sha256:00"),
		node("quay.io/coreos/etcd:v3.5.21"),
	}
	got := imagesNotOnNodes(nodes, []string{
		"busybox:1.28.0-glibc", "quay.io/coreos/etcd:v3.5.21", // held, spelled differently
		"quay.io/coreos/etcd-operator:v0.9.4", "quay.io/coreos/etcd-operator:v0.9.4", // missing, twice
		"ghcr.io/aenix-io/etcd-operator:v0.4.2",
	})
	want := "ghcr.io/aenix-io/etcd-operator:v0.4.2 quay.io/coreos/etcd-operator:v0.9.4"
	if strings.Join(got, " ") != want {
		t.Errorf("missing = %v, want %s", got, want)
	}
}

func TestMissingImagesErrorSaysHowToLoad(t *testing.T) {
	if kindClusterName("kind-etcdproof") != "etcdproof" || kindClusterName("prod") != "<cluster>" {
		t.Error("kind cluster name not derived from the context")
	}
	err := missingImagesError("aenix", "etcdproof", map[string]string{
		"ghcr.io/aenix-io/etcd-operator:v0.4.2": "ErrImagePull: dial tcp: lookup ghcr.io: no such host",
	})
	for _, want := range []string{"profile aenix", "ghcr.io/aenix-io/etcd-operator:v0.4.2 (ErrImagePull", "bin/etcdproof cluster load --name etcdproof ghcr.io/aenix-io/etcd-operator:v0.4.2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%s", want, err)
		}
	}
	// The substrate installs no kind binary: the hint must name a command it has.
	if strings.Contains(err.Error(), "kind load") {
		t.Errorf("error advises the kind binary:\n%s", err)
	}
}

// A member or operator pod stuck on its image names the same command as the
// missing-images error: etcdproof's own cluster load, not the kind binary.
func TestImagePullProblemSaysHowToLoad(t *testing.T) {
	stuck := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "example-abc", Namespace: "ns"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "etcd", Image: "quay.io/coreos/etcd:v3.9.0",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}},
		}}},
	}
	e := &Env{Opts: Options{Context: "kind-etcdproof"}, Kube: kubefake.NewClientset(stuck)}
	got := e.imagePullProblem(context.Background(), "ns")
	want := "pod example-abc: image quay.io/coreos/etcd:v3.9.0: ErrImagePull (load it into the nodes, e.g. bin/etcdproof cluster load --name etcdproof quay.io/coreos/etcd:v3.9.0)"
	if got != want {
		t.Errorf("imagePullProblem =\n  %s\nwant\n  %s", got, want)
	}
}
