package runner

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

var labelWord = regexp.MustCompile(`[A-Za-z0-9_-]+`)

// ValidateLabelFilter parses a Ginkgo label filter and rejects labels that
// name no check.
func ValidateLabelFilter(filter string) error {
	if filter == "" {
		return nil
	}
	if _, err := types.ParseLabelFilter(filter); err != nil {
		return fmt.Errorf("--label-filter %q: %v", filter, err)
	}
	for _, w := range labelWord.FindAllString(filter, -1) {
		if _, group := profile.CheckGroups[w]; !slices.Contains(profile.CheckLabels, w) && !group {
			return fmt.Errorf("--label-filter %q: unknown label %q; checks are %s, groups %s", filter, w,
				strings.Join(profile.CheckLabels, ", "), strings.Join(slices.Sorted(maps.Keys(profile.CheckGroups)), ", "))
		}
	}
	return nil
}

// Selected reports whether a (valid) label filter selects a check.
func Selected(filter, check string) bool {
	if filter == "" {
		return true
	}
	f, err := types.ParseLabelFilter(filter)
	return err == nil && f(profile.LabelsOf(check))
}

// RequiredChecks is the set of checks that must pass: the --require list
// when given; otherwise the book's six checks and the claimed checks (the
// fault checks and insights) the profile claims, of those the run selects
// (narrowing the run narrows what it certifies, and says so). A claimed
// check a profile does not claim is reported as not claimed without
// failing the run: claiming it is how a profile asks to be certified for it.
func RequiredChecks(sel Selection, require []string, claims profile.Capabilities) []string {
	if require != nil {
		return require
	}
	var out []string
	for _, c := range profile.CheckLabels {
		if !sel.Selected(c) {
			continue
		}
		if slices.Contains(profile.BookChecks, c) || claims.Claims(c) {
			out = append(out, c)
		}
	}
	return out
}

// ParseRequire splits and checks a --require value.
func ParseRequire(value string) ([]string, error) {
	out := []string{}
	for _, w := range strings.Split(value, ",") {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
			continue
		case !slices.Contains(profile.CheckLabels, w):
			return nil, fmt.Errorf("--require %q: unknown check %q; checks are %s", value, w, strings.Join(profile.CheckLabels, ", "))
		case !slices.Contains(out, w):
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--require %q names no check; leave the flag out for the default", value)
	}
	return out, nil
}

// UnknownNodes is the node count of a cluster whose nodes could not be
// counted: no check is left out, and the node checks say for themselves
// whether the cluster has enough.
const UnknownNodes = -1

// Selection is which checks a run selects: those the --label-filter
// selects, less those the cluster has too few schedulable nodes for
// (specs.WorkersNeeded). A check left out for want of nodes is reported
// not selected and is not required, the same from make e2e as from
// etcdproof run; one the label filter or --require names runs anyway, and
// is INCOMPLETE where it cannot run: an explicit ask never silently passes.
type Selection struct {
	// Filter is the --label-filter as given.
	Filter string
	// leftOut maps each check left out for want of nodes to why.
	leftOut map[string]string
}

// Select is the selection of a run with this label filter and --require
// on a cluster with nodes schedulable nodes (UnknownNodes: not counted).
func Select(filter string, require []string, sizes profile.Sizes, nodes int) Selection {
	sel := Selection{Filter: filter, leftOut: map[string]string{}}
	if nodes < 0 {
		return sel
	}
	named := labelWord.FindAllString(filter, -1)
	for _, c := range profile.CheckLabels {
		need := specs.WorkersNeeded(c, sizes)
		if need <= nodes || !Selected(filter, c) || slices.Contains(named, c) || slices.Contains(require, c) {
			continue
		}
		sel.leftOut[c] = fmt.Sprintf("needs %d workers (one member on each), the cluster has %d schedulable %s", need, nodes, plural(nodes, "node", "nodes"))
	}
	return sel
}

// Selected reports whether the run selects check.
func (s Selection) Selected(check string) bool {
	_, short := s.leftOut[check]
	return !short && Selected(s.Filter, check)
}

// Why is why check is not selected, "" when it is.
func (s Selection) Why(check string) string {
	if why, short := s.leftOut[check]; short {
		return why
	}
	if !Selected(s.Filter, check) {
		return "not selected by --label-filter"
	}
	return ""
}

// LeftOut are the checks left out for want of nodes, in run order.
func (s Selection) LeftOut() []string {
	var out []string
	for _, c := range profile.CheckLabels {
		if _, short := s.leftOut[c]; short {
			out = append(out, c)
		}
	}
	return out
}

// GinkgoFilter is the label filter Ginkgo runs the specs with: the
// --label-filter less the checks left out.
func (s Selection) GinkgoFilter() string {
	var not []string
	for _, c := range s.LeftOut() {
		not = append(not, "!"+c)
	}
	switch {
	case len(not) == 0:
		return s.Filter
	case s.Filter == "":
		return strings.Join(not, " && ")
	}
	return "(" + s.Filter + ") && " + strings.Join(not, " && ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
