package report

import (
	"fmt"
	"slices"
	"strings"
)

// CapabilityLevel is the highest Operator Framework capability level whose
// checks all passed in a run, beside the level the profile says the
// operator's CSV declares. A level is proven only by checks that ran and
// passed: one not claimed, not selected or incomplete proves nothing.
type CapabilityLevel struct {
	// Level is 1-5, 0 when not even Basic Install was proven.
	Level int    `json:"level"`
	Name  string `json:"name"`
	// Declared is the level the profile says the operator's CSV declares
	// (capabilityLevel); "" when it says none.
	Declared string `json:"declared,omitempty"`
	// Next says what keeps the next level from being proven.
	Next string `json:"next,omitempty"`
}

// CapabilityLevels are the Operator Framework's levels, in order, with the
// checks that prove each on top of the levels below (docs/checks.md,
// "Capability levels", says why each sits where it does).
var CapabilityLevels = []struct {
	Name   string
	Checks []string
}{
	// Provisioning and configuration, with least privilege, and nothing
	// left behind.
	{Name: "Basic Install", Checks: []string{"create", "rbac", "cleanup"}},
	// Patch and minor upgrades of etcd, and of the operator itself, with
	// clients served throughout.
	{Name: "Seamless Upgrades", Checks: []string{"upgrade", "operator-upgrade"}},
	// The application and storage lifecycle: scaling, failure recovery,
	// backup and restore (also of a bad backup), and the voluntary
	// disruptions of node maintenance.
	{Name: "Full Lifecycle", Checks: []string{"scale", "replace", "quorum-loss", "recreate-over-claims", "backup-restore", "bad-restore", "drain", "drain-during-rollout"}},
	// Events and metrics about the operand: a member replacement told in
	// Events on the CR, naming the member etcd lost or gained, and a
	// metric counting the cluster's members as etcd does. Alerts (rules an
	// operator ships for Prometheus) are not observed: no check could
	// tell a useful alert from a useless one.
	{Name: "Deep Insights", Checks: []string{"insights"}},
	// Abnormalities handled with no person: crashes, lost nodes, partitions,
	// a full disk.
	{Name: "Auto Pilot", Checks: []string{"kill", "partition", "node-loss", "space"}},
}

// spaceRecovery is the space check's timing of writes brought back.
const spaceRecovery = "recovery"

// LevelNamed returns the level (1-5) of a capability level's name, 0 for
// an unknown one.
func LevelNamed(name string) int {
	for i, l := range CapabilityLevels {
		if strings.EqualFold(l.Name, name) {
			return i + 1
		}
	}
	return 0
}

// ProveCapability sets rep.Capability from the checks' states. Auto Pilot
// needs a space check that passed with its recovery judged (the
// "recovery" timing, taken only under space: recovers): every profile's
// space check asks only that a full disk loses no member; Auto Pilot also
// brings writes back with no person. Read from the report alone, so a
// column merged from several runs is proven the same way.
func (rep *Report) ProveCapability(declared string) {
	recoveryJudged := false
	if c := rep.CheckNamed("space"); c != nil {
		_, recoveryJudged = c.Timings[spaceRecovery]
	}
	state := map[string]State{}
	for _, c := range rep.Checks {
		state[c.Name] = c.State
	}
	cl := CapabilityLevel{Declared: declared}
	for i, l := range CapabilityLevels {
		var missing []string
		for _, name := range l.Checks {
			if state[name] != Passed {
				missing = append(missing, fmt.Sprintf("%s %s", name, state[name].Label()))
			}
		}
		if slices.Contains(l.Checks, "space") && state["space"] == Passed && !recoveryJudged {
			missing = append(missing, "space passed without the recovers claim (writes brought back with no person)")
		}
		if len(missing) > 0 {
			cl.Next = fmt.Sprintf("%s (level %d) not proven: %s", l.Name, i+1, strings.Join(missing, "; "))
			break
		}
		cl.Level, cl.Name = i+1, l.Name
	}
	rep.Capability = &cl
}

// Line is the capability level as the terminal and report.md print it.
func (cl *CapabilityLevel) Line() string {
	proven := "none proven"
	if cl.Level > 0 {
		proven = fmt.Sprintf("level %d, %s, proven", cl.Level, cl.Name)
	}
	if cl.Declared != "" {
		proven += fmt.Sprintf(" (the CSV declares %s, level %d)", cl.Declared, LevelNamed(cl.Declared))
	}
	if cl.Next != "" {
		proven += "; " + cl.Next
	}
	return "Capability: " + proven
}

// CapabilityChecks lists every check that some level requires.
func CapabilityChecks() []string {
	var all []string
	for _, l := range CapabilityLevels {
		for _, c := range l.Checks {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	return all
}
