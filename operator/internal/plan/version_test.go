package plan

import "testing"

// TestVersionChanges checks the operator's side of the shared table; the
// CRD's side is controller.TestCRDVersionChanges.
func TestVersionChanges(t *testing.T) {
	for _, vc := range VersionChanges {
		t.Run(vc.Name, func(t *testing.T) {
			// Before a version is reported, the members run the one they were
			// created with: the previous spec.version.
			running := vc.Current
			if running == "" {
				running = vc.OldSpec
			}
			if got := reason(CheckVersionChange(running, vc.NewSpec)); got != vc.Refusal {
				t.Errorf("CheckVersionChange(%q, %q) = %q, want %q", running, vc.NewSpec, got, vc.Refusal)
			}
			o := midRollout(vc)
			version, r := EffectiveVersion(o)
			if got := reason(r); got != vc.Refusal {
				t.Errorf("EffectiveVersion refusal = %q, want %q (members run %s)", got, vc.Refusal, CurrentVersion(o))
			}
			if want := map[bool]string{true: vc.NewSpec, false: running}[vc.Refusal == ""]; version != want {
				t.Errorf("EffectiveVersion = %s, want %s", version, want)
			}
		})
	}
}

// midRollout is a cluster as a row of VersionChanges finds it: member a runs
// status.currentVersion, b and c the previous spec.version where that is
// newer (a rollout under way), and spec.version is the new one.
func midRollout(vc VersionChange) Observed {
	running := vc.Current
	if running == "" {
		running = vc.OldSpec
	}
	o := cluster(running, "a", "b", "c")
	o.ReportedVersion, o.Version = vc.Current, vc.NewSpec
	if vc.OldSpec != running && LowestVersion([]string{running, vc.OldSpec}) == running {
		for i := 1; i < 3; i++ {
			o.Pods[i].Version, o.Pods[i].Image = vc.OldSpec, repo+":v"+vc.OldSpec
		}
	}
	return o
}

func reason(r *Refusal) string {
	if r == nil {
		return ""
	}
	return r.Reason
}
