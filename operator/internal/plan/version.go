package plan

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// ParseVersion reads an etcd release number, "3.5.21" (or "v3.5.21", or
// "3.6.0-rc.1"), with util/version's semantic-version parser. The result
// keeps MAJOR.MINOR.PATCH only: pre-release and build suffixes take no part
// in comparisons ("3.6.0-rc.1" orders like "3.6.0") and are not printed.
func ParseVersion(s string) (*version.Version, error) {
	v, err := version.ParseSemantic(s)
	if err != nil {
		return nil, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
	}
	// A version built from its numbers alone is not semantic, so LessThan
	// and EqualTo compare the numbers and nothing else.
	return version.MajorMinor(v.Major(), v.Minor()).WithPatch(v.Patch()), nil
}

// Refusal says why a version change is not made.
type Refusal struct {
	Reason  string
	Message string
}

// MinorUpgradeFloors names, for each minor release that etcd's upgrade guide
// lets a cluster reach only from a recent enough patch of the release before
// it, that patch: every member must run it (or a later patch) first.
//
// 3.6 reads membership from the v3 store (bbolt), which 3.5 kept only as a
// copy of the v2 store, and 3.5 patches got that copy wrong in ways that
// fail the upgrade or bring back removed members:
//   - up to 3.5.19 a learner's promotion was not written to the v3 store, so
//     a 3.6 member can find "too many learner members" and not start
//     (etcd-io/etcd#19557, fixed in 3.5.20);
//   - up to 3.5.23 a learner could receive that wrong membership in a
//     snapshot from an older member and pass it on across upgrades
//     (etcd-io/etcd#20793, fixed in 3.5.24): rolling replacement with
//     learners is exactly how this operator adds every member;
//   - up to 3.5.25 members removed long ago could come back as "zombie"
//     members once 3.6 trusts the v3 store (fixed in 3.5.26, which syncs it
//     from the v2 store; etcd.io/blog/2025/zombie_members_upgrade says there
//     is no safe path to 3.6 without it);
//   - 3.5.32 is what the 3.5 to 3.6 upgrade guide asks for today
//     (etcd.io/docs/v3.6/upgrades/upgrade_3_6, etcd-io/website#1203): it
//     adds the v2 store checks the guide walks through before 3.6.
//
// A refused change costs one patch upgrade, which the operator rolls like
// any other; an allowed one from an older patch can leave a cluster that
// does not start on 3.6. The CRD's transition rules refuse the same changes
// (see VersionChanges).
var MinorUpgradeFloors = map[string]string{"3.6": "3.5.32"}

// CheckVersionChange refuses a downgrade or a jump of more than one minor
// release (etcd supports neither) from current, the version the members run,
// and a minor upgrade from a patch older than etcd's upgrade guide allows
// (MinorUpgradeFloors); nil means the change is safe to roll out. The CRD's
// transition rules make the same decision from status.currentVersion (see
// VersionChanges).
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
	case tgt.LessThan(cur):
		return &Refusal{
			Reason:  conditions.ReasonDowngradeRefused,
			Message: fmt.Sprintf("downgrade from %s to %s refused: etcd does not support downgrades; set spec.version back to %s or later", cur, tgt, cur),
		}
	case tgt.Major() != cur.Major() || tgt.Minor() > cur.Minor()+1:
		return &Refusal{
			Reason:  conditions.ReasonVersionSkewRefused,
			Message: fmt.Sprintf("upgrade from %s to %s refused: upgrade one minor release at a time (next: %d.%d.x)", cur, tgt, cur.Major(), cur.Minor()+1),
		}
	}
	return checkMinorUpgradeFloor(cur, tgt)
}

// checkMinorUpgradeFloor refuses a minor upgrade from cur to tgt while cur
// is older than the patch etcd's upgrade guide asks for (MinorUpgradeFloors).
func checkMinorUpgradeFloor(cur, tgt *version.Version) *Refusal {
	floor, ok := MinorUpgradeFloors[fmt.Sprintf("%d.%d", tgt.Major(), tgt.Minor())]
	if !ok || tgt.Minor() != cur.Minor()+1 || tgt.Major() != cur.Major() {
		return nil
	}
	lowest, err := ParseVersion(floor)
	if err != nil || !cur.LessThan(lowest) {
		return nil
	}
	return &Refusal{
		Reason: conditions.ReasonOldPatchRefused,
		Message: fmt.Sprintf("upgrade from %s to %s refused: etcd's upgrade guide asks every member to run %s or a later %d.%d patch before %d.%d (older patches can leave membership data that %d.%d does not start on); set spec.version to %s or later first, then to %s",
			cur, tgt, lowest, lowest.Major(), lowest.Minor(), tgt.Major(), tgt.Minor(), tgt.Major(), tgt.Minor(), lowest, tgt),
	}
}

// LowestVersion returns the lowest parsable version of the list, or "".
func LowestVersion(versions []string) string {
	var lowest *version.Version
	text := ""
	for _, s := range versions {
		v, err := ParseVersion(s)
		if err != nil {
			continue
		}
		if lowest == nil || v.LessThan(lowest) {
			lowest, text = v, s
		}
	}
	return text
}

// EffectiveVersion is the version new members get: spec.version unless that
// change is refused, or its image could not be pulled (HeldImage), or a
// member did not become healthy on it (UnhealthyImage); then the version the
// cluster runs now.
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
	if image := UnhealthyImage(o); image != "" {
		return current, &Refusal{
			Reason: conditions.ReasonNewVersionUnhealthy,
			Message: fmt.Sprintf("a member did not become healthy on %s within %s (its etcd kept exiting): the upgrade to %s is held; that member runs %s again (on emptyDir it was removed), no other member moves and new members get %s; set spec.version to %s to roll back, or to another version to go on",
				image, o.NotRunningDeadline, o.Version, current, current, current),
		}
	}
	return o.Version, nil
}

// CurrentVersion is the lowest version a healthy member runs. A member that
// does not answer (its pod is gone, has not started yet, or crashes) counts
// with the version reported before (Observed.ReportedVersion): its data is
// that of the version it last ran healthily, which is where it goes back to
// if its new pod cannot start or never becomes healthy (HeldImage,
// UnhealthyImage), and which spec.version can always be set back to.
// Before any version is reported (a new cluster) pods count as they are.
func CurrentVersion(o Observed) string {
	var versions []string
	waiting := false
	for _, name := range o.memberNames() {
		p, ok := o.pod(name)
		if !ok || (o.ReportedVersion != "" && !o.answers(name)) {
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
