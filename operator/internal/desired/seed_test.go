package desired

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestSeedPod: a seeded member is a member pod whose init container runs the
// operator's binary on the data volume, starting a new one-member cluster of
// its own (its own token), and records where its data came from.
func TestSeedPod(t *testing.T) {
	c := sample()
	s := Seed{Image: "etcdproof/etcd-operator:dev", From: "example-old", FromURL: "http://10.0.0.7:2379",
		RaftIndex: 42, Replaces: []string{"example-old", "example-other"}}
	pod := SeedPod(c, Member{Name: "example-new", Version: "3.5.21"}, s, Unsafe{})

	if len(pod.Spec.InitContainers) != 1 {
		t.Fatalf("init containers %v, want the seed one", pod.Spec.InitContainers)
	}
	init, etcd := pod.Spec.InitContainers[0], pod.Spec.Containers[0]
	if init.Name != SeedContainerName || init.Image != s.Image || !slices.Equal(init.Command[:2], []string{OperatorBinary, "seed"}) {
		t.Errorf("init container %s runs %s %v", init.Name, init.Image, init.Command)
	}
	if !slices.Contains(init.Command, "--from="+s.FromURL) || !slices.Contains(init.Command, "--data-dir="+DataDir) {
		t.Errorf("init command %v does not copy from %s into %s", init.Command, s.FromURL, DataDir)
	}
	if !equality.Semantic.DeepEqual(init.VolumeMounts, etcd.VolumeMounts) || init.SecurityContext == nil {
		t.Errorf("init container mounts %v (etcd: %v), security context %v", init.VolumeMounts, etcd.VolumeMounts, init.SecurityContext)
	}
	for _, want := range []string{"--initial-cluster=example-new=" + PeerURL(sample(), "example-new"),
		"--initial-cluster-state=new", "--initial-cluster-token=" + SeedToken("example-new")} {
		if !slices.Contains(etcd.Command, want) {
			t.Errorf("etcd command %v lacks %s", etcd.Command, want)
		}
	}
	from, index, replaces, ok := SeedOf(pod)
	if !ok || from != s.From || index != s.RaftIndex || !slices.Equal(replaces, s.Replaces) {
		t.Errorf("SeedOf = %q %d %v %v, want what SeedPod recorded", from, index, replaces, ok)
	}
	if _, _, _, ok := SeedOf(MemberPod(c, Member{Name: "example-x", Version: "3.5.21"}, Unsafe{})); ok {
		t.Error("a plain member pod reads as seeded")
	}
}
