package specs

import (
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/framework"
)

// A kill counts for a step only when it landed before the step could have
// converged: a kill in the last poll before the cluster was seen whole may
// have hit an operator with nothing left to do.
func TestKillsBeforeConvergence(t *testing.T) {
	kills := []framework.OperatorKill{{After: 3 * time.Second}, {After: 9 * time.Second}}
	whole, poll := 10*time.Second, 2*time.Second
	if n := killsBefore(kills, whole-poll); n != 1 {
		t.Errorf("kills before %s = %d, want 1 (the kill at 9 s landed in the last poll)", whole-poll, n)
	}
	if n := killsBefore(kills[1:], whole-poll); n != 0 {
		t.Errorf("a step whose only kill came in its last poll counts %d kills, want 0", n)
	}
}
