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

// TestNoBootstrapBesideClaims: an EtcdCluster created again over the claims
// an earlier one of its name left (deleted with --cascade=orphan, its pods
// gone since) starts those members again on their data; it never
// bootstraps a new, empty cluster beside them, and never deletes a claim it
// does not control. A spec without a claim spec waits for a person.
func TestNoBootstrapBesideClaims(t *testing.T) {
	leftClaims := func(o *Observed) {
		o.PVCCreated, o.UnownedPVCs = map[string]time.Time{}, map[string]bool{}
		for _, n := range []string{"old-a", "old-b", "old-c"} {
			o.PVCs[n], o.PVCCreated[n], o.UnownedPVCs[n] = true, now.Add(-time.Hour), true
		}
	}
	recreated := with(Observed{Now: now, Size: 3, Version: "3.5.21", Repository: repo, UsesPVC: true, PVCs: map[string]bool{}}, leftClaims)
	tests := []struct {
		name   string
		in     Observed
		want   Kind
		member string
	}{
		{"recreated over claims: their members start again", recreated, RecreatePod, "old-a"},
		{"recreated over claims, one member back: the next", with(recreated, func(o *Observed) {
			o.Pods = []Pod{{Name: "old-a", Version: "3.5.21", Created: now}}
		}), RecreatePod, "old-b"},
		{"recreated without a claim spec: wait", with(recreated, func(o *Observed) { o.UsesPVC = false }), Wait, ""},
		{"no claims: bootstrap", with(recreated, func(o *Observed) { o.PVCs, o.UnownedPVCs = map[string]bool{}, nil }), Bootstrap, ""},
		{"its own claims of a bootstrap cut short before its pods: bootstrap", with(recreated, func(o *Observed) { o.UnownedPVCs = nil }), Bootstrap, ""},
		{"a new cluster's members beside unowned claims: the claims stay", with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
			o.UsesPVC = true
			leftClaims(o)
		}), Nothing, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if got.Kind != tt.want {
				t.Fatalf("Next() = %s (%s), want %s", got.Kind, got.Message, tt.want)
			}
			if tt.member != "" && got.Member != tt.member {
				t.Fatalf("Next() acts on %s, want %s", got.Member, tt.member)
			}
		})
	}
}

// TestUnsafeBootstrapBesideClaims: the self-test's known-bad mode does what
// the operator did before: a new cluster beside the claims, which it then
// deletes.
func TestUnsafeBootstrapBesideClaims(t *testing.T) {
	unsafe := Options{BootstrapBesideClaims: true}
	leftClaims := func(o *Observed) {
		o.UsesPVC = true
		o.PVCCreated, o.UnownedPVCs = map[string]time.Time{"old-a": now.Add(-time.Hour)}, map[string]bool{"old-a": true}
		o.PVCs["old-a"] = true
	}
	if got := Next(with(Observed{Now: now, Size: 3, Version: "3.5.21", Repository: repo, PVCs: map[string]bool{}}, leftClaims), unsafe); got.Kind != Bootstrap {
		t.Fatalf("Next() = %s (%s), want Bootstrap", got.Kind, got.Message)
	}
	if got := Next(with(cluster("3.5.21", "a", "b", "c"), leftClaims), unsafe); got.Kind != DeleteOrphanClaim || got.Member != "old-a" {
		t.Fatalf("Next() = %s %s (%s), want DeleteOrphanClaim old-a", got.Kind, got.Member, got.Message)
	}
}
