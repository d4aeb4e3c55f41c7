package specs

import (
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/framework"
)

func TestSpreadProblem(t *testing.T) {
	workers := []string{"w1", "w2", "w3"}
	for _, tc := range []struct {
		name   string
		placed map[string]string
		want   string // substring; "" means no problem
	}{
		{"one member per worker", map[string]string{"a": "w1", "b": "w2", "c": "w3"}, ""},
		{"two members share a worker", map[string]string{"a": "w1", "b": "w1", "c": "w3"}, "member pods a, b share node w1"},
		{"a member on the control plane", map[string]string{"a": "cp", "b": "w2", "c": "w3"}, `run on "cp", not a worker node`},
		{"a member not placed yet", map[string]string{"a": "", "b": "w2", "c": "w3"}, `run on "", not a worker node`},
	} {
		got := spreadProblem(tc.placed, workers)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: spreadProblem = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNodeLossVictim(t *testing.T) {
	truth := framework.Truth{LeaderID: 1, Pods: []framework.PodTruth{
		{Pod: "a", MemberID: 1, Leader: 1}, {Pod: "c", MemberID: 3, Leader: 1}, {Pod: "b", MemberID: 2, Leader: 1},
	}}
	placed := map[string]string{"a": "w1", "b": "w2", "c": "w3"}
	for _, tc := range []struct {
		name      string
		avoid     []string
		pod, role string
		ok        bool
	}{
		{"the first follower by name", nil, "b", "follower", true},
		{"a follower whose node holds nothing to avoid", []string{"w2"}, "c", "follower", true},
		{"the leader when both followers' nodes are taken", []string{"w2", "w3"}, "a", "leader", true},
		{"none when every node is taken", []string{"w1", "w2", "w3"}, "", "", false},
	} {
		pod, role, ok := nodeLossVictim(truth, placed, tc.avoid)
		if pod != tc.pod || role != tc.role || ok != tc.ok {
			t.Errorf("%s: nodeLossVictim = %q %q %v, want %q %q %v", tc.name, pod, role, ok, tc.pod, tc.role, tc.ok)
		}
	}
}
