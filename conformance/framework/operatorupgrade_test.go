package framework

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOperatorNotReplaced(t *testing.T) {
	pod := func(name, uid string, ready bool) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
	}
	terminating := pod("op-old", "a", true)
	terminating.DeletionTimestamp = &metav1.Time{}
	old := map[types.UID]bool{"a": true}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string // substring; "" means replaced
	}{
		{"only the new pod, ready", []corev1.Pod{pod("op-new", "b", true)}, ""},
		{"steps changed nothing", []corev1.Pod{pod("op-old", "a", true)}, "operator pod op-old from before the upgrade is still there"},
		{"the old pod still terminating", []corev1.Pod{terminating, pod("op-new", "b", true)}, "op-old from before the upgrade is still there"},
		{"the new pod not ready yet", []corev1.Pod{pod("op-new", "b", false)}, "operator pod op-new is not ready"},
		{"no pod at all", nil, "no operator pod"},
	} {
		got := ""
		if err := operatorNotReplaced(old, tc.pods); err != nil {
			got = err.Error()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: operatorNotReplaced = %q, want %q", tc.name, got, tc.want)
		}
	}
}
