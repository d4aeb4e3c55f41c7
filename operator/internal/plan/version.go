package plan

import (
	"fmt"
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
// release (etcd supports neither); nil means the change is safe to roll out.
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
