package specs

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/etcdproof/etcdproof/conformance/framework"
)

func TestMemberPodChanges(t *testing.T) {
	before := map[string]framework.MemberPodState{"m-a": {UID: "1", Restarts: 0}, "m-b": {UID: "2", Restarts: 3}, "m-c": {UID: "3"}}
	for _, tc := range []struct {
		name  string
		now   map[string]framework.MemberPodState
		whole bool
		want  []string
	}{
		{"untouched", before, true, nil},
		{"a member added by the scale-up", with(before, "m-d", framework.MemberPodState{UID: "4"}), true, nil},
		{"replaced under its name", with(before, "m-b", framework.MemberPodState{UID: "9", Restarts: 3}), true,
			[]string{"member pod m-b was replaced by the operator upgrade (UID 2, now 9)"}},
		{"restarted in place", with(before, "m-a", framework.MemberPodState{UID: "1", Restarts: 1}), false,
			[]string{"member pod m-a was restarted by the operator upgrade (etcd container restarts 0, now 1)"}},
		{"gone while the operator settles", without(before, "m-c"), true,
			[]string{"member pod m-c was deleted by the operator upgrade"}},
		{"gone after the scale-down: any member may be removed", without(before, "m-c"), false, nil},
		{"each change named, in order", with(with(without(before, "m-a"), "m-b", framework.MemberPodState{UID: "2", Restarts: 4}), "m-c", framework.MemberPodState{UID: "7"}), true,
			[]string{
				"member pod m-a was deleted by the operator upgrade",
				"member pod m-b was restarted by the operator upgrade (etcd container restarts 3, now 4)",
				"member pod m-c was replaced by the operator upgrade (UID 3, now 7)",
			}},
	} {
		if got := memberPodChanges(before, tc.now, tc.whole); !slices.Equal(got, tc.want) {
			t.Errorf("%s: memberPodChanges = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNewPods(t *testing.T) {
	pod := func(name, uid string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
	}
	before := []corev1.Pod{pod("op-1", "a")}
	for _, tc := range []struct {
		name string
		now  []corev1.Pod
		want string
	}{
		{"steps changed nothing", before, "(none)"},
		{"the old pod is gone, no new one yet", nil, "(none)"},
		{"a new pod beside the old", []corev1.Pod{pod("op-1", "a"), pod("op-2", "b")}, "op-2"},
		{"recreated under the same name", []corev1.Pod{pod("op-1", "c")}, "op-1"},
	} {
		if got := podNames(newPods(before, tc.now)); got != tc.want {
			t.Errorf("%s: new pods %s, want %s", tc.name, got, tc.want)
		}
	}
}

func with(m map[string]framework.MemberPodState, name string, s framework.MemberPodState) map[string]framework.MemberPodState {
	out := map[string]framework.MemberPodState{name: s}
	for k, v := range m {
		if k != name {
			out[k] = v
		}
	}
	return out
}

func without(m map[string]framework.MemberPodState, name string) map[string]framework.MemberPodState {
	out := map[string]framework.MemberPodState{}
	for k, v := range m {
		if k != name {
			out[k] = v
		}
	}
	return out
}
