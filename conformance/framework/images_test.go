package framework

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
	for _, want := range []string{"profile aenix", "ghcr.io/aenix-io/etcd-operator:v0.4.2 (ErrImagePull", "kind load docker-image ghcr.io/aenix-io/etcd-operator:v0.4.2 --name etcdproof"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%s", want, err)
		}
	}
}
