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

// TestParseVersionOrder pins what ParseVersion keeps of util/version's
// semantic versions: the numbers only, so a pre-release orders (and prints)
// like its release, as the hand-written parser before it did.
func TestParseVersionOrder(t *testing.T) {
	tests := []struct {
		a, b   string
		less   bool // a < b
		aPrint string
	}{
		{"3.5.21", "3.5.22", true, "3.5.21"},
		{"3.5.22", "3.5.21", false, "3.5.22"},
		{"3.5.9", "3.5.10", true, "3.5.9"}, // numeric, not lexical
		{"3.5.21", "3.6.0", true, "3.5.21"},
		{"3.6.5", "4.0.0", true, "3.6.5"},
		{"v3.5.21", "3.5.21", false, "3.5.21"},
		{"3.6.0-rc.1", "3.6.0", false, "3.6.0"}, // pre-release ignored
		{"3.6.0", "3.6.0-rc.1", false, "3.6.0"},
		{"3.6.0-rc.1", "3.6.1", true, "3.6.0"},
		{"3.5.21-alpha.0", "3.5.21-rc.2", false, "3.5.21"},
	}
	for _, tt := range tests {
		a, err := ParseVersion(tt.a)
		if err != nil {
			t.Fatalf("ParseVersion(%q): %v", tt.a, err)
		}
		b, err := ParseVersion(tt.b)
		if err != nil {
			t.Fatalf("ParseVersion(%q): %v", tt.b, err)
		}
		if got := a.LessThan(b); got != tt.less {
			t.Errorf("%s < %s = %v, want %v", tt.a, tt.b, got, tt.less)
		}
		if got := a.String(); got != tt.aPrint {
			t.Errorf("ParseVersion(%q).String() = %q, want %q", tt.a, got, tt.aPrint)
		}
	}
}

func TestCheckVersionChangeMessages(t *testing.T) {
	tests := []struct{ current, target, want string }{
		{"3.5.21", "3.5.17", "downgrade from 3.5.21 to 3.5.17 refused: etcd does not support downgrades; set spec.version back to 3.5.21 or later"},
		{"3.4.37", "3.6.5", "upgrade from 3.4.37 to 3.6.5 refused: upgrade one minor release at a time (next: 3.5.x)"},
		{"3.6.0-rc.1", "3.5.21", "downgrade from 3.6.0 to 3.5.21 refused: etcd does not support downgrades; set spec.version back to 3.6.0 or later"},
		{"3.5.21", "latest", `version "latest" is not MAJOR.MINOR.PATCH`},
	}
	for _, tt := range tests {
		r := CheckVersionChange(tt.current, tt.target)
		if r == nil {
			t.Errorf("CheckVersionChange(%q, %q) = nil, want %q", tt.current, tt.target, tt.want)
			continue
		}
		if r.Message != tt.want {
			t.Errorf("CheckVersionChange(%q, %q) message = %q, want %q", tt.current, tt.target, r.Message, tt.want)
		}
	}
	// Pre-release and release of one patch are the same version here.
	if r := CheckVersionChange("3.6.0", "3.6.0-rc.1"); r != nil {
		t.Errorf("CheckVersionChange(3.6.0, 3.6.0-rc.1) = %+v, want nil", r)
	}
}
