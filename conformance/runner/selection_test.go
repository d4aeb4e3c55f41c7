package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// nodeChecks are the checks that need a worker node per member.
var nodeChecks = []string{"node-loss", "drain", "drain-during-rollout"}

// A check the cluster has too few nodes for is left out, as not selected
// and not required, unless the label filter or --require names it: an
// explicit ask runs (and is INCOMPLETE there), never silently passes.
func TestSelectLeavesOutChecksTheClusterHasTooFewNodesFor(t *testing.T) {
	sizes := profile.Sizes{NodeLoss: 3, Drain: 3}
	claims := profile.Capabilities{NodeLoss: true, Drain: true, Kill: true}
	for _, tc := range []struct {
		name    string
		filter  string
		require []string
		nodes   int
		// selected and leftOut are checks of nodeChecks (and kill, create).
		selected, leftOut []string
		required          string
	}{
		{name: "one node, no filter", nodes: 1,
			selected: []string{"create", "kill"}, leftOut: nodeChecks,
			required: "create,scale,replace,kill,space,upgrade,rbac,cleanup"},
		{name: "one node, --label-filter drain", filter: "drain", nodes: 1,
			selected: []string{"drain"}, required: "drain"},
		{name: "one node, --label-filter faults (a group names no check)", filter: "faults", nodes: 1,
			selected: []string{"kill"}, leftOut: nodeChecks, required: "kill,space"},
		{name: "one node, --label-filter 'node-loss || create'", filter: "node-loss || create", nodes: 1,
			selected: []string{"node-loss", "create"}, required: "create,node-loss"},
		{name: "one node, --require node-loss", require: []string{"node-loss"}, nodes: 1,
			selected: []string{"create", "node-loss"}, leftOut: []string{"drain", "drain-during-rollout"}, required: "node-loss"},
		{name: "two nodes", nodes: 2, selected: []string{"create"}, leftOut: nodeChecks,
			required: "create,scale,replace,kill,space,upgrade,rbac,cleanup"},
		{name: "three workers", nodes: 3, selected: append([]string{"create", "kill"}, nodeChecks...),
			required: "create,scale,replace,kill,node-loss,drain,drain-during-rollout,space,upgrade,rbac,cleanup"},
		{name: "four nodes", nodes: 4, selected: append([]string{"create", "kill"}, nodeChecks...),
			required: "create,scale,replace,kill,node-loss,drain,drain-during-rollout,space,upgrade,rbac,cleanup"},
		{name: "nodes not counted", nodes: UnknownNodes, selected: append([]string{"create"}, nodeChecks...),
			required: "create,scale,replace,kill,node-loss,drain,drain-during-rollout,space,upgrade,rbac,cleanup"},
	} {
		sel := Select(tc.filter, tc.require, sizes, tc.nodes)
		for _, c := range tc.selected {
			if !sel.Selected(c) {
				t.Errorf("%s: %s not selected (%q), want selected", tc.name, c, sel.Why(c))
			}
		}
		for _, c := range tc.leftOut {
			if sel.Selected(c) {
				t.Errorf("%s: %s selected, want left out: the cluster has %d nodes", tc.name, c, tc.nodes)
			} else if why := sel.Why(c); !strings.Contains(why, "needs 3 workers") {
				t.Errorf("%s: %s left out because %q, want it to say it needs 3 workers", tc.name, c, why)
			}
		}
		if got := strings.Join(RequiredChecks(sel, tc.require, claims), ","); got != tc.required {
			t.Errorf("%s: required %q, want %q", tc.name, got, tc.required)
		}
	}
}

// Ginkgo runs what the selection selects: the user's filter less the
// checks left out.
func TestSelectionGinkgoFilter(t *testing.T) {
	sizes := profile.Sizes{NodeLoss: 3, Drain: 3}
	for _, tc := range []struct {
		filter string
		nodes  int
		want   string
	}{
		{"", 4, ""},
		{"", 1, "!node-loss && !drain && !drain-during-rollout"},
		{"faults", 1, "(faults) && !node-loss && !drain && !drain-during-rollout"},
		{"faults && !node-loss", 1, "(faults && !node-loss) && !drain && !drain-during-rollout"},
		{"drain", 1, "drain"},
		{"create || scale", 1, "create || scale"},
	} {
		if got := Select(tc.filter, nil, sizes, tc.nodes).GinkgoFilter(); got != tc.want {
			t.Errorf("filter %q on %d nodes: Ginkgo filter %q, want %q", tc.filter, tc.nodes, got, tc.want)
		}
	}
}

// The checks left out are the ones WorkersNeeded names, in run order.
func TestSelectionLeftOutInRunOrder(t *testing.T) {
	sel := Select("", nil, profile.Sizes{NodeLoss: 3, Drain: 3}, 1)
	if got := sel.LeftOut(); !slices.Equal(got, nodeChecks) {
		t.Errorf("left out %v, want %v", got, nodeChecks)
	}
}
