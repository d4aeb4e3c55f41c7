package floor

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func cluster() *etcdv1beta2.EtcdCluster {
	return &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "floor-1", Namespace: "ns", UID: "floor-1"},
		Spec:       etcdv1beta2.EtcdClusterSpec{Version: "3.6.16", Repository: "quay.io/coreos/etcd"},
	}
}

// The floor's objects are the reference's, owned by nothing: an owner
// reference to an EtcdCluster that does not exist would have the garbage
// collector delete them under the benchmark.
func TestFloorObjectsAreTheReferencesWithoutOwner(t *testing.T) {
	c := cluster()
	names := []string{"floor-1-a", "floor-1-b", "floor-1-c"}
	pods := BootstrapPods(c, "3.6.16", "tok", names)
	if len(pods) != 3 {
		t.Fatalf("got %d pods, want 3", len(pods))
	}
	for _, p := range pods {
		if len(p.OwnerReferences) != 0 {
			t.Errorf("pod %s has owners %v", p.Name, p.OwnerReferences)
		}
		cmd := strings.Join(p.Spec.Containers[0].Command, " ")
		for _, want := range []string{"--initial-cluster-state=new", "--initial-cluster-token=tok", "--name=" + p.Name,
			"floor-1-a=http://floor-1-a.floor-1.ns.svc:2380,floor-1-b=http://floor-1-b.floor-1.ns.svc:2380,floor-1-c=http://floor-1-c.floor-1.ns.svc:2380"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("pod %s command lacks %q: %s", p.Name, want, cmd)
			}
		}
		if got := p.Spec.Containers[0].Image; got != "quay.io/coreos/etcd:v3.6.16" {
			t.Errorf("pod %s image %s", p.Name, got)
		}
		if p.Labels["etcd_cluster"] != "floor-1" || p.Labels["app"] != "etcd" {
			t.Errorf("pod %s labels %v do not match Selector %v", p.Name, p.Labels, Selector(c))
		}
	}
	for _, s := range Services(c) {
		if len(s.OwnerReferences) != 0 {
			t.Errorf("Service %s has owners %v", s.Name, s.OwnerReferences)
		}
	}
	if !slices.ContainsFunc(Services(c), func(s *corev1.Service) bool { return s.Name == ClientServiceName(c) }) {
		t.Errorf("no client Service %s", ClientServiceName(c))
	}

	join := JoiningPod(c, "3.6.16", "floor-1-d", append(names, "floor-1-d"))
	cmd := strings.Join(join.Spec.Containers[0].Command, " ")
	if !strings.Contains(cmd, "--initial-cluster-state=existing") || strings.Contains(cmd, "--initial-cluster-token") || !strings.Contains(cmd, "floor-1-d=http://") {
		t.Errorf("joining pod command: %s", cmd)
	}
	if len(join.OwnerReferences) != 0 {
		t.Errorf("joining pod has owners %v", join.OwnerReferences)
	}
}
