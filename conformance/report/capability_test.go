package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// withStates is a report whose checks (every check label) are passed but
// for the states given.
func withStates(states map[string]report.State) *report.Report {
	rep := &report.Report{}
	for _, name := range profile.CheckLabels {
		s, ok := states[name]
		if !ok {
			s = report.Passed
		}
		c := &report.Check{Name: name, State: s}
		if name == "space" {
			// Passed under space: recovers, its recovery judged.
			c.Timings = map[string]report.Millis{"recovery": 1000}
		}
		rep.Checks = append(rep.Checks, c)
	}
	return rep
}

// TestCapabilityLevelIsProvenByPassedChecksOnly: a level is proven only
// when every check it needs passed; a check not run, not claimed or
// incomplete proves nothing, and the report says what the next level lacks.
func TestCapabilityLevelIsProvenByPassedChecksOnly(t *testing.T) {
	tests := []struct {
		name   string
		states map[string]report.State
		level  int
		next   string
	}{
		{"every check passed: Auto Pilot", nil, 5, ""},
		{"insights not claimed: Full Lifecycle", map[string]report.State{"insights": report.NotClaimed}, 3,
			"Deep Insights (level 4) not proven: insights not claimed"},
		{"insights failed, Auto Pilot's checks passed: still Full Lifecycle", map[string]report.State{"insights": report.Failed}, 3,
			"Deep Insights (level 4) not proven: insights failed"},
		{"one node only: drain not selected", map[string]report.State{"drain": report.NotSelected, "node-loss": report.NotSelected}, 2,
			"Full Lifecycle (level 3) not proven: drain not selected"},
		{"emptyDir only: recreate-over-claims not claimed", map[string]report.State{"recreate-over-claims": report.NotClaimed}, 2,
			"recreate-over-claims not claimed"},
		{"the operator upgrade failed", map[string]report.State{"operator-upgrade": report.Failed}, 1, "Seamless Upgrades (level 2) not proven: operator-upgrade failed"},
		{"rbac incomplete: not even Basic Install", map[string]report.State{"rbac": report.Incomplete}, 0, "rbac INCOMPLETE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := withStates(tt.states)
			rep.ProveCapability("Full Lifecycle")
			cl := rep.Capability
			if cl.Level != tt.level || !strings.Contains(cl.Next, tt.next) || cl.Declared != "Full Lifecycle" {
				t.Fatalf("capability %+v, want level %d and next containing %q", cl, tt.level, tt.next)
			}
			if !strings.Contains(cl.Line(), "declares Full Lifecycle, level 3") {
				t.Errorf("line %q does not show the declared level", cl.Line())
			}
		})
	}
}

// The levels are the Operator Framework's, and every check they name exists.
func TestCapabilityLevelsNameRealChecks(t *testing.T) {
	for i, l := range report.CapabilityLevels {
		if l.Name != profile.OperatorFrameworkLevels[i] {
			t.Errorf("level %d is %q, the Operator Framework's is %q", i+1, l.Name, profile.OperatorFrameworkLevels[i])
		}
	}
	for _, c := range report.CapabilityChecks() {
		if !slices.Contains(profile.CheckLabels, c) {
			t.Errorf("a level needs check %q, which does not exist", c)
		}
	}
}

// TestAutoPilotNeedsWritesBackOnTheirOwn: every profile's space check only
// asks that a full disk loses no member and no quorum; Auto Pilot is an
// operator that also brings writes back with no person, so it needs the
// space check passed under the claim that says so (space: recovers).
func TestAutoPilotNeedsWritesBackOnTheirOwn(t *testing.T) {
	rep := withStates(nil)
	delete(rep.CheckNamed("space").Timings, "recovery") // a profile that claims no recovery
	rep.ProveCapability("Auto Pilot")
	cl := rep.Capability
	if cl.Level != 4 || !strings.Contains(cl.Next, "Auto Pilot (level 5) not proven: space passed without the recovers claim") {
		t.Fatalf("capability %+v, want level 4, Auto Pilot missing the recovers claim", cl)
	}
}
