package desired

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func TestTolerations(t *testing.T) {
	lost := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
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
		{"none: both lost-node taints tolerated for ever", nil, []corev1.Toleration{notReady, unreachable}},
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
func TestMemberPodToleratesALostNode(t *testing.T) {
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

// TestLostNodeNeverEvictsAMember: the node controller deletes every pod of a
// node that stopped reporting once its lost-node toleration runs out,
// whether its etcd still answers or not and however many members that
// leaves. Kubelets cut off from the API server for 80 s on two of three
// nodes (etcd between them fine) had both members' pods deleted at once
// after the 30 s toleration; once the kubelets were back they killed both
// members, and on emptyDir their data with them: quorum lost for good. So no
// member pod may carry a lost-node toleration that runs out: on a lost node
// the operator decides (plan.NodeLost), one member at a time, only for a
// member that does not answer, and only while the others keep quorum.
func TestLostNodeNeverEvictsAMember(t *testing.T) {
	for name, pod := range map[string]*etcdv1beta2.PodPolicy{
		"emptyDir": nil,
		"claims":   {PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{}},
	} {
		c := sample()
		c.Spec.Pod = pod
		p := MemberPod(c, Member{Name: "example-a", Version: "3.5.21"}, Unsafe{})
		for _, taint := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
			var toleration *corev1.Toleration
			for i, tol := range p.Spec.Tolerations {
				if tol.ToleratesTaint(klog.Background(), &corev1.Taint{Key: taint, Effect: corev1.TaintEffectNoExecute}, false) {
					toleration = &p.Spec.Tolerations[i]
				}
			}
			switch {
			case toleration == nil:
				t.Errorf("%s: %s is not tolerated: the pod is deleted as soon as its node is lost (or after the 300 s the admission plugin adds)", name, taint)
			case toleration.TolerationSeconds != nil:
				t.Errorf("%s: %s is tolerated for %d s only: the node controller deletes the pod that long after its node is lost, whether its member answers or not",
					name, taint, *toleration.TolerationSeconds)
			}
		}
	}
}

// TestLostNodeTolerationsForEver: running members made with a lost-node
// toleration that runs out (30 s from older operators, 300 s from the
// admission plugin) get it for ever, in place; the user's own stay.
func TestLostNodeTolerationsForEver(t *testing.T) {
	seconds := func(key string, s int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)}
	}
	forEver := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	}
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
	notReady, unreachable := corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable
	tests := []struct {
		name        string
		pod, user   []corev1.Toleration
		want        []corev1.Toleration
		wantChanged bool
	}{
		{"an older operator's 30 s", []corev1.Toleration{seconds(notReady, 30), seconds(unreachable, 30)}, nil,
			[]corev1.Toleration{forEver(notReady), forEver(unreachable)}, true},
		{"the admission plugin's 300 s, beside another toleration with seconds",
			[]corev1.Toleration{dedicated, seconds(notReady, 300), seconds(unreachable, 300)}, []corev1.Toleration{dedicated},
			[]corev1.Toleration{dedicated, forEver(notReady), forEver(unreachable)}, true},
		{"the user's own seconds stay", []corev1.Toleration{seconds(notReady, 600), forEver(unreachable)}, []corev1.Toleration{seconds(notReady, 600)},
			[]corev1.Toleration{seconds(notReady, 600), forEver(unreachable)}, false},
		{"already for ever", Tolerations(nil), nil, Tolerations(nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := append([]corev1.Toleration(nil), tt.pod...)
			got, changed := LostNodeTolerationsForEver(tt.pod, tt.user)
			if changed != tt.wantChanged || !equality.Semantic.DeepEqual(got, tt.want) {
				t.Fatalf("LostNodeTolerationsForEver() = %+v, %v\nwant %+v, %v", got, changed, tt.want, tt.wantChanged)
			}
			if !equality.Semantic.DeepEqual(pod, tt.pod) {
				t.Fatalf("LostNodeTolerationsForEver() changed its argument: %+v", tt.pod)
			}
		})
	}
}
