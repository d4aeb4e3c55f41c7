package runner

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
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
// fault checks and insights) the profile claims, or with a label filter
// those it selects (narrowing the run narrows what it certifies, and says
// so). A claimed check a profile does not claim is reported as not claimed without failing the run: claiming it is
// how a profile asks to be certified for it.
func RequiredChecks(filter string, require []string, claims profile.Capabilities) []string {
	if require != nil {
		return require
	}
	var out []string
	for _, c := range profile.CheckLabels {
		if !Selected(filter, c) {
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
