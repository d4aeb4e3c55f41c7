package desired

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func TestTolerations(t *testing.T) {
	lost := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
			TolerationSeconds: ptr.To(LostNodeTolerationSeconds)}
	}
	notReady, unreachable := lost(corev1.TaintNodeNotReady), lost(corev1.TaintNodeUnreachable)
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "etcd", Effect: corev1.TaintEffectNoSchedule}
	userNotReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](600)}
	forever := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	tests := []struct {
		name string
		user []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none: both lost-node taints tolerated for 30 s", nil, []corev1.Toleration{notReady, unreachable}},
		{"other tolerations are kept, first", []corev1.Toleration{dedicated}, []corev1.Toleration{dedicated, notReady, unreachable}},
		{"the user's not-ready toleration wins; unreachable is defaulted",
			[]corev1.Toleration{userNotReady}, []corev1.Toleration{userNotReady, unreachable}},
		{"a toleration with no effect covers NoExecute: tolerated for ever, as the user asked",
			[]corev1.Toleration{forever}, []corev1.Toleration{forever, notReady}},
		{"an empty key tolerates every taint: nothing added", []corev1.Toleration{everything}, []corev1.Toleration{everything}},
		{"a NoSchedule toleration of the key does not cover eviction",
			[]corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, notReady, unreachable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := append([]corev1.Toleration(nil), tt.user...)
			got := Tolerations(tt.user)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Fatalf("Tolerations() = %+v\nwant %+v", got, tt.want)
			}
			if !equality.Semantic.DeepEqual(user, tt.user) {
				t.Fatalf("Tolerations() changed its argument: %+v", tt.user)
			}
		})
	}
}

// The default tolerations are on every member pod, and they leave the pod
// policy hash alone: an operator upgrade that adds them rolls no member.
func TestMemberPodToleratesALostNodeBriefly(t *testing.T) {
	for name, pod := range map[string]*etcdv1beta2.PodPolicy{
		"no spec.pod":         nil,
		"with a toleration":   {Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}},
		"with claims as well": {PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{}},
	} {
		c := sample()
		c.Spec.Pod = pod
		before := PodPolicyHash(c)
		p := MemberPod(c, Member{Name: "example-a", Version: "3.5.21"}, Unsafe{})
		var user []corev1.Toleration
		if pod != nil {
			user = pod.Tolerations
		}
		if !equality.Semantic.DeepEqual(p.Spec.Tolerations, Tolerations(user)) {
			t.Errorf("%s: tolerations %+v, want %+v", name, p.Spec.Tolerations, Tolerations(user))
		}
		if p.Annotations[AnnotationPodPolicy] != before {
			t.Errorf("%s: pod policy hash %s, want %s (the spec as written)", name, p.Annotations[AnnotationPodPolicy], before)
		}
	}
	// The hash of a cluster with no spec.pod, as the operators before these
	// defaults wrote it on every member pod: it must not move with them.
	if got := PodPolicyHash(sample()); got != "9acca9082e865d64" {
		t.Errorf("pod policy hash of a cluster with no spec.pod = %s, want 9acca9082e865d64 (running members would be rolled)", got)
	}
}
