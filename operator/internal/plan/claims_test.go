package plan

import (
	"testing"
	"time"
)

// TestOrphanClaims: the claim of a member removed from membership whose pod
// is gone too (the operator stopped between the removal and the claim's
// deletion) is deleted; a claim of a member, of a pod, or made a moment ago
// is not.
func TestOrphanClaims(t *testing.T) {
	volumes := func(o *Observed) {
		o.UsesPVC = true
		o.PVCCreated = map[string]time.Time{}
		for _, n := range []string{"a", "b", "c", "d"} {
			o.PVCs[n] = true
			o.PVCCreated[n] = now.Add(-time.Hour)
		}
	}
	healthy := with(cluster("3.5.21", "a", "b", "c"), volumes)
	tests := []struct {
		name string
		in   Observed
		want Kind
	}{
		{"claim of a removed member, no pod", healthy, DeleteOrphanClaim},
		{"claim of a removed member made a moment ago", with(healthy, func(o *Observed) { o.PVCCreated["d"] = now.Add(-time.Second) }), Nothing},
		{"claim whose pod is still there", with(healthy, func(o *Observed) {
			o.Pods = append(o.Pods, Pod{Name: "d", Created: now.Add(-time.Second)})
		}), Wait},
		{"claims of members only", with(healthy, func(o *Observed) { delete(o.PVCs, "d") }), Nothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if got.Kind != tt.want {
				t.Fatalf("Next() = %s (%s), want %s", got.Kind, got.Message, tt.want)
			}
			if got.Kind == DeleteOrphanClaim && got.Member != "d" {
				t.Fatalf("deletes claim %s, want d", got.Member)
			}
		})
	}
}
