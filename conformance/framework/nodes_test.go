package framework

import (
	"strings"
	"testing"
)

// TestKindNodesOnlyForKindContexts: on a cluster that is not kind's, the
// kill check must learn why it cannot reach the nodes (and end INCOMPLETE),
// never go on as if it had killed anything.
func TestKindNodesOnlyForKindContexts(t *testing.T) {
	for _, context := range []string{"prod", "gke_project_zone_cluster", "kind-"} {
		_, err := (&Env{Opts: Options{Context: context}}).KindNodes()
		if err == nil || !strings.Contains(err.Error(), "not a kind cluster") {
			t.Errorf("context %q: error %v, want one saying it is not a kind cluster", context, err)
		}
	}
}
