package plan

import "testing"

// TestPlannedStopsOfVotersAreEvictions: a stop of a healthy voter the
// cluster can spare is an eviction, counted by the PodDisruptionBudget
// together with a drain's; a dead member's pod, and a restart the budget
// could never allow (one or two voters), is deleted.
func TestPlannedStopsOfVotersAreEvictions(t *testing.T) {
	upgrading := func(o *Observed) { o.Version = "3.5.36" }
	tests := []struct {
		name      string
		in        Observed
		opts      Options
		wantKind  Kind
		wantEvict bool
	}{
		{"scale down 4→3: the surplus follower is stopped first, through the budget",
			with(cluster("3.5.21", "a", "b", "c", "d"), func(o *Observed) { o.Size = 3 }), Options{}, StopMember, true},
		{"emptyDir roll at size 3: the outdated follower is stopped once its replacement votes",
			with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
				upgrading(o)
				o.Pods = append(o.Pods, Pod{Name: "d", Version: "3.5.36", Image: repo + ":v3.5.36", Created: now})
				o.Members = append(o.Members, Member{ID: 4, Name: "d", Started: true, Healthy: true})
			}), Options{}, StopMember, true},
		{"claims roll at size 3: the outdated follower restarts in place, through the budget",
			with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { upgrading(o); withClaims(o) }), Options{}, RestartMember, true},
		{"claims roll at size 1: nobody to spare, the budget would never allow it",
			with(cluster("3.5.21", "a"), func(o *Observed) { upgrading(o); withClaims(o) }), Options{}, RestartMember, false},
		{"claims roll at size 2: the same",
			with(cluster("3.5.21", "a", "b"), func(o *Observed) { upgrading(o); withClaims(o) }), Options{}, RestartMember, false},
		{"unsafe RestartBeforeRejoin deletes, as a roll that waits for no one",
			with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) { upgrading(o); withClaims(o) }),
			Options{RestartBeforeRejoin: true}, RestartMember, false},
		{"a failed member on its claim: its pod is deleted",
			with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
				withClaims(o)
				o.Pods[2].Failed = true
				o.Members[2].Healthy = false
			}), Options{}, RestartMember, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, tt.opts)
			if got.Kind != tt.wantKind || got.Evict != tt.wantEvict {
				t.Fatalf("Next() = %s of %s, Evict %v; want %s, Evict %v (%s)", got.Kind, got.Member, got.Evict, tt.wantKind, tt.wantEvict, got.Message)
			}
		})
	}
}
