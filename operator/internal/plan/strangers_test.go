package plan

import (
	"testing"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// TestStrangers: a new EtcdCluster whose name and labels match pods it does
// not control never bootstraps beside them: it adopts orphaned members of
// its etcd cluster, and stops at anything else.
func TestStrangers(t *testing.T) {
	fresh := Observed{Now: now, Size: 3, Version: "3.5.21", Repository: repo, PVCs: map[string]bool{}}
	orphans := with(cluster("3.5.21", "a", "b", "c"), func(o *Observed) {
		o.Phase, o.Pods, o.Adoptable = etcdv1beta2.PhaseNone, nil, []string{"a", "b", "c"}
	})
	tests := []struct {
		name string
		in   Observed
		want Kind
	}{
		{"no strangers: bootstrap", fresh, Bootstrap},
		{"orphaned members: adopt them, do not bootstrap", orphans, AdoptPods},
		{"a foreign pod: change nothing", with(fresh, func(o *Observed) { o.Foreign = []string{"x (controlled by Deployment y)"} }), Wait},
		{"a foreign pod beside orphaned members: adopt nothing", with(orphans, func(o *Observed) { o.Foreign = []string{"x"} }), Wait},
		{"paused: nothing", with(orphans, func(o *Observed) { o.Paused = true }), Nothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.in, Options{})
			if got.Kind != tt.want {
				t.Fatalf("Next() = %s (%s), want %s", got.Kind, got.Message, tt.want)
			}
			if got.Kind == AdoptPods && len(got.Names) != 3 {
				t.Fatalf("adopts %v, want a, b and c", got.Names)
			}
		})
	}
}
