package desired

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func TestResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name string
		user corev1.ResourceRequirements
		want corev1.ResourceRequirements
	}{
		{"nothing set: default requests, no limits (Burstable)", corev1.ResourceRequirements{},
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")}}},
		{"a user's request wins, the other resource is defaulted",
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}},
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("1Gi")}}},
		{"a limit without a request is left alone (Kubernetes requests the limit)",
			corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}},
			corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: q("1Gi")},
			}},
		{"Guaranteed stays Guaranteed",
			corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("4Gi")}},
			corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("4Gi")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := *tt.user.DeepCopy()
			got := Resources(tt.user)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Fatalf("Resources() = %+v, want %+v", got, tt.want)
			}
			if !equality.Semantic.DeepEqual(user, tt.user) {
				t.Fatalf("Resources() changed its argument: %+v", tt.user)
			}
		})
	}
	c := sample()
	if got := MemberPod(c, Member{Name: "example-a", Version: "3.5.21"}, Unsafe{}).Spec.Containers[0].Resources; !equality.Semantic.DeepEqual(got, Resources(corev1.ResourceRequirements{})) {
		t.Errorf("member pod without spec.pod: resources %+v", got)
	}
}

func TestPodPolicyHash(t *testing.T) {
	base := PodPolicyHash(sample())
	if base == "" {
		t.Fatal("empty hash")
	}
	same := sample()
	same.Spec.Pod = &etcdv1beta2.PodPolicy{}
	if PodPolicyHash(same) != base {
		t.Error("an empty spec.pod hashes differently from none")
	}
	for name, edit := range map[string]func(*etcdv1beta2.PodPolicy){
		"resources": func(p *etcdv1beta2.PodPolicy) {
			p.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		},
		"nodeSelector": func(p *etcdv1beta2.PodPolicy) { p.NodeSelector = map[string]string{"disk": "ssd"} },
		"antiAffinity": func(p *etcdv1beta2.PodPolicy) { p.AntiAffinity = true },
		"affinity":     func(p *etcdv1beta2.PodPolicy) { p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}} },
		"tolerations": func(p *etcdv1beta2.PodPolicy) {
			p.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		},
		"labels":      func(p *etcdv1beta2.PodPolicy) { p.Labels = map[string]string{"a": "b"} },
		"annotations": func(p *etcdv1beta2.PodPolicy) { p.Annotations = map[string]string{"a": "b"} },
		"etcdEnv":     func(p *etcdv1beta2.PodPolicy) { p.EtcdEnv = []corev1.EnvVar{{Name: "A"}} },
		"securityContext": func(p *etcdv1beta2.PodPolicy) {
			p.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		},
	} {
		c := sample()
		c.Spec.Pod = &etcdv1beta2.PodPolicy{}
		edit(c.Spec.Pod)
		if PodPolicyHash(c) == base {
			t.Errorf("a change of %s does not change the hash", name)
		}
	}
	for name, edit := range map[string]func(*etcdv1beta2.EtcdCluster){
		"version": func(c *etcdv1beta2.EtcdCluster) { c.Spec.Version = "3.6.5" },
		"size":    func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 5 },
		"claim spec": func(c *etcdv1beta2.EtcdCluster) {
			c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{}}
		},
		"busybox image (ignored)": func(c *etcdv1beta2.EtcdCluster) {
			c.Spec.Pod = &etcdv1beta2.PodPolicy{BusyboxImage: "busybox:1.28"}
		},
	} {
		c := sample()
		edit(c)
		if PodPolicyHash(c) != base {
			t.Errorf("a change of %s changes the pod policy hash", name)
		}
	}
	p := MemberPod(sample(), Member{Name: "example-a", Version: "3.5.21"}, Unsafe{})
	if p.Annotations[AnnotationPodPolicy] != base {
		t.Errorf("member pod annotations %v: want the policy hash %s", p.Annotations, base)
	}
}

// TestPodPolicyHashKeepsOldHashes: the hash of a policy that sets none of
// the fields added to it later is the one earlier operators wrote on member
// pods, so upgrading the operator rolls only the members of clusters that
// set such a field (values from the operator before labels, annotations,
// etcdEnv and securityContext were hashed).
func TestPodPolicyHashKeepsOldHashes(t *testing.T) {
	c := sample()
	if got, want := PodPolicyHash(c), "9acca9082e865d64"; got != want {
		t.Errorf("no spec.pod: hash %s, earlier operators wrote %s", got, want)
	}
	c.Spec.Pod = &etcdv1beta2.PodPolicy{NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}
	if got, want := PodPolicyHash(c), "d8f7788269e82795"; got != want {
		t.Errorf("node selector and tolerations: hash %s, earlier operators wrote %s", got, want)
	}
}

func TestDisruptionBudget(t *testing.T) {
	c := sample()
	for _, pdb := range []struct {
		name         string
		minAvailable *intstr.IntOrString
		selector     map[string]string
		owners       int
	}{
		{DisruptionBudget(c, 0).Name, DisruptionBudget(c, 0).Spec.MinAvailable, DisruptionBudget(c, 0).Spec.Selector.MatchLabels, len(DisruptionBudget(c, 0).OwnerReferences)},
		{DisruptionBudgetV1beta1(c, 0).Name, DisruptionBudgetV1beta1(c, 0).Spec.MinAvailable, DisruptionBudgetV1beta1(c, 0).Spec.Selector.MatchLabels, len(DisruptionBudgetV1beta1(c, 0).OwnerReferences)},
	} {
		// sample() has size 3: membership unknown counts spec.size.
		if pdb.name != "example" || pdb.minAvailable == nil || pdb.minAvailable.String() != "2" || pdb.owners != 1 ||
			!equality.Semantic.DeepEqual(pdb.selector, map[string]string{"app": "etcd", "etcd_cluster": "example", "etcd.database.coreos.com/voter": "true"}) {
			t.Errorf("budget %+v", pdb)
		}
	}
	if DisruptionBudget(c, 0).Spec.MaxUnavailable != nil {
		t.Error("maxUnavailable set alongside minAvailable")
	}
}

// allowedEvictions is the disruption controller's arithmetic
// (pkg/controller/disruption): an integer minAvailable is the healthy
// count to keep; maxUnavailable is taken from the expected count, which
// for a custom resource is its scale subresource's replicas (spec.size).
func allowedEvictions(spec policyv1.PodDisruptionBudgetSpec, size, readyVoters int) int {
	keep := 0
	switch {
	case spec.MinAvailable != nil:
		keep = spec.MinAvailable.IntValue()
	case spec.MaxUnavailable != nil:
		keep = size - spec.MaxUnavailable.IntValue()
	}
	return max(0, readyVoters-keep)
}

// TestDisruptionBudgetKeepsQuorum: whatever spec.size says and however
// many voters etcd lists (a scale-down 5→3 under way, a fifth voter for the
// moment of a roll), the budget allows at most one eviction at a time and
// none that leaves fewer than a quorum of the voters ready; with one or two
// voters, none at all. The budget counted from spec.size failed this: 3
// evictions at once during 5→3, 2 of 4 voters during a roll at size 3, and
// the only member of a size-1 cluster.
func TestDisruptionBudgetKeepsQuorum(t *testing.T) {
	c := sample()
	for size := 1; size <= 7; size++ {
		// Voters etcd may list while spec.size is size: a scale in either
		// direction, or one more for a roll.
		for voters := max(1, size-2); voters <= size+2; voters++ {
			c.Spec.Size = size
			spec := DisruptionBudget(c, voters).Spec
			quorum := voters/2 + 1
			for ready := 0; ready <= voters; ready++ {
				allowed := allowedEvictions(spec, size, ready)
				if allowed > 1 {
					t.Errorf("size %d, %d voters, %d ready: %d evictions allowed at once, want at most 1", size, voters, ready, allowed)
				}
				if allowed > 0 && ready-allowed < quorum {
					t.Errorf("size %d, %d voters, %d ready: %d evictions allowed, leaving %d of %d voters, below quorum %d",
						size, voters, ready, allowed, ready-allowed, voters, quorum)
				}
				if voters <= 2 && allowed > 0 {
					t.Errorf("size %d, %d voters: %d evictions allowed; losing one of %d loses the quorum", size, voters, allowed, voters)
				}
			}
		}
	}
}
