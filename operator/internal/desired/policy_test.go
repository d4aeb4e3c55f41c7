package desired

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

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
		"pod labels": func(c *etcdv1beta2.EtcdCluster) {
			c.Spec.Pod = &etcdv1beta2.PodPolicy{Labels: map[string]string{"a": "b"}}
		},
		"environment": func(c *etcdv1beta2.EtcdCluster) {
			c.Spec.Pod = &etcdv1beta2.PodPolicy{EtcdEnv: []corev1.EnvVar{{Name: "A"}}}
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

func TestDisruptionBudget(t *testing.T) {
	c := sample()
	for _, pdb := range []struct {
		name, maxUnavailable string
		selector             map[string]string
		owners               int
	}{
		{DisruptionBudget(c).Name, DisruptionBudget(c).Spec.MaxUnavailable.String(), DisruptionBudget(c).Spec.Selector.MatchLabels, len(DisruptionBudget(c).OwnerReferences)},
		{DisruptionBudgetV1beta1(c).Name, DisruptionBudgetV1beta1(c).Spec.MaxUnavailable.String(), DisruptionBudgetV1beta1(c).Spec.Selector.MatchLabels, len(DisruptionBudgetV1beta1(c).OwnerReferences)},
	} {
		if pdb.name != "example" || pdb.maxUnavailable != "1" || pdb.owners != 1 ||
			!equality.Semantic.DeepEqual(pdb.selector, map[string]string{"app": "etcd", "etcd_cluster": "example", "etcd.database.coreos.com/voter": "true"}) {
			t.Errorf("budget %+v", pdb)
		}
	}
	if DisruptionBudget(c).Spec.MinAvailable != nil {
		t.Error("minAvailable set alongside maxUnavailable")
	}
}
