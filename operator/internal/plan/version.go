package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// Version is a parsed etcd release number; pre-release suffixes are ignored.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "3.5.21" (or "v3.5.21", or "3.6.0-rc.1").
func ParseVersion(s string) (Version, error) {
	core, _, _ := strings.Cut(strings.TrimPrefix(s, "v"), "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// Less orders versions.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Refusal says why a version change is not made.
type Refusal struct {
	Reason  string
	Message string
}

// CheckVersionChange refuses a downgrade or a jump of more than one minor
// release (etcd supports neither) from current, the version the members run;
// nil means the change is safe to roll out. The CRD's transition rules make
// the same decision from status.currentVersion (see VersionChanges).
func CheckVersionChange(current, target string) *Refusal {
	if current == "" || current == target {
		return nil
	}
	cur, err := ParseVersion(current)
	if err != nil {
		return nil // nothing known to compare with; the member versions decide later
	}
	tgt, err := ParseVersion(target)
	if err != nil {
		return &Refusal{Reason: conditions.ReasonVersionSkewRefused, Message: err.Error()}
	}
	switch {
	case tgt.Less(cur):
		return &Refusal{
			Reason:  conditions.ReasonDowngradeRefused,
			Message: fmt.Sprintf("downgrade from %s to %s refused: etcd does not support downgrades; set spec.version back to %s or later", cur, tgt, cur),
		}
	case tgt.Major != cur.Major || tgt.Minor > cur.Minor+1:
		return &Refusal{
			Reason:  conditions.ReasonVersionSkewRefused,
			Message: fmt.Sprintf("upgrade from %s to %s refused: upgrade one minor release at a time (next: %d.%d.x)", cur, tgt, cur.Major, cur.Minor+1),
		}
	}
	return nil
}

// LowestVersion returns the lowest parsable version of the list, or "".
func LowestVersion(versions []string) string {
	lowest, text := Version{}, ""
	for _, s := range versions {
		v, err := ParseVersion(s)
		if err != nil {
			continue
		}
		if text == "" || v.Less(lowest) {
			lowest, text = v, s
		}
	}
	return text
}

// EffectiveVersion is the version new members get: spec.version unless that
// change is refused, or its image could not be pulled (HeldImage); then the
// version the cluster runs now.
func EffectiveVersion(o Observed) (string, *Refusal) {
	current := CurrentVersion(o)
	if r := CheckVersionChange(current, o.Version); r != nil {
		return current, r
	}
	if image := HeldImage(o); image != "" {
		return current, &Refusal{
			Reason: conditions.ReasonImageNotPulled,
			Message: fmt.Sprintf("image %s could not be pulled: the upgrade to %s is held and members stay on %s; set spec.version to another version to go on",
				image, o.Version, current),
		}
	}
	return o.Version, nil
}

// CurrentVersion is the lowest version a member runs. A member whose pod is
// gone, or has not started yet, counts with the version reported before
// (Observed.ReportedVersion): its data is still that of the version it ran
// last, which is where it goes back to if the new pod cannot start (HeldImage).
// Before any version is reported (a new cluster) pods count as they are.
func CurrentVersion(o Observed) string {
	var versions []string
	waiting := false
	for _, name := range o.memberNames() {
		p, ok := o.pod(name)
		if !ok || (p.Pending && o.ReportedVersion != "") {
			waiting = true
			continue
		}
		versions = append(versions, p.Version)
	}
	if waiting || len(versions) == 0 {
		versions = append(versions, o.ReportedVersion)
	}
	return LowestVersion(versions)
}

// memberNames are the members' names; while no member answers, those of
// the pods and claims there are.
func (o Observed) memberNames() []string {
	var names []string
	if o.MembershipKnown {
		for _, m := range o.Members {
			names = append(names, m.Name)
		}
		return names
	}
	seen := map[string]bool{}
	for _, p := range o.Pods {
		seen[p.Name] = true
	}
	if o.UsesPVC {
		for name := range o.PVCs {
			seen[name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
