package specs

import (
	"slices"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// The checks Register declares are the checks profiles, reports and the
// runner know (profile.CheckLabels), each once, in run order: rbac and
// cleanup last, since they judge what the others made the operator do.
func TestRegisterDeclaresEveryCheckInRunOrder(t *testing.T) {
	var labels []string
	for _, c := range checks {
		labels = append(labels, c.label)
	}
	if !slices.Equal(labels, profile.CheckLabels) {
		t.Errorf("Register declares %v, want profile.CheckLabels %v", labels, profile.CheckLabels)
	}
}
