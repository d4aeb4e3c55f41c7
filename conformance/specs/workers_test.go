package specs

import (
	"slices"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The checks that need a worker per member are checks, and need as many
// workers as the suite config makes them members.
func TestWorkersNeededNamesChecksAndTheirSizes(t *testing.T) {
	for check := range workersNeeded {
		if !slices.Contains(profile.CheckLabels, check) {
			t.Errorf("workersNeeded names %q, which is not a check (%v)", check, profile.CheckLabels)
		}
	}
	sizes := profile.Sizes{Create: 5, NodeLoss: 3, Drain: 4}
	for check, want := range map[string]int{"node-loss": 3, "drain": 4, "drain-during-rollout": 4, "create": 0, "kill": 0} {
		if got := WorkersNeeded(check, sizes); got != want {
			t.Errorf("WorkersNeeded(%q) = %d, want %d", check, got, want)
		}
	}
}
