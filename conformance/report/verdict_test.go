package report

import (
	"strings"
	"testing"
)

// checks builds the six checks from "name:state" pairs; a leading "-"
// marks a check that is not required.
func checks(spec ...string) []*Check {
	var out []*Check
	for _, s := range spec {
		name, state, _ := strings.Cut(s, ":")
		c := &Check{Name: strings.TrimPrefix(name, "-"), State: State(state), Required: !strings.HasPrefix(name, "-")}
		switch c.State {
		case Failed:
			c.Failure = "broke " + c.Name
		case Incomplete:
			c.Incomplete = "no --audit-log given"
		case NotClaimed:
			c.Skipped = "profile does not claim it"
		case NotSelected:
			c.Skipped = "not selected by --label-filter"
		case Skipped:
			c.Skipped = "--skip-cleanup leaves resources in place on purpose"
		}
		out = append(out, c)
	}
	return out
}

// Each case is a run the v1 model called PASS (or got wrong) unless noted.
func TestJudgeNeverPassesVacuously(t *testing.T) {
	all := func(rbac, cleanup string) []*Check {
		return checks("create:passed", "scale:passed", "replace:passed", "upgrade:passed", "rbac:"+rbac, "cleanup:"+cleanup)
	}
	for _, tc := range []struct {
		name  string
		rep   Report
		want  Verdict
		line  string
		count Counts
	}{
		{name: "every required check passed", rep: Report{Checks: all("passed", "passed")},
			want: VerdictPass, line: "PASS (6/6)", count: Counts{Required: 6, RequiredPassed: 6, Passed: 6}},
		{name: "rbac without an audit log", rep: Report{Checks: all("incomplete", "passed")},
			want: VerdictIncomplete, line: "INCOMPLETE (5/6: rbac could not run: no --audit-log given)", count: Counts{Required: 6, RequiredPassed: 5, Passed: 5, Incomplete: 1}},
		{name: "a profile that claims nothing", rep: Report{Checks: checks("create:passed", "scale:notClaimed", "replace:notClaimed", "upgrade:notClaimed", "rbac:passed", "cleanup:passed")},
			want: VerdictIncomplete, line: "INCOMPLETE (3/6: scale is required but the profile does not claim it; replace is required but the profile does not claim it; upgrade is required but the profile does not claim it)"},
		{name: "--skip-cleanup", rep: Report{Checks: all("passed", "skipped")},
			want: VerdictIncomplete, line: "INCOMPLETE (5/6: cleanup is required but skipped: --skip-cleanup leaves resources in place on purpose)"},
		{name: "--label-filter create alone (required = selected)", rep: Report{Checks: checks("create:passed", "-scale:notSelected", "-replace:notSelected", "-upgrade:notSelected", "-rbac:notSelected", "-cleanup:notSelected")},
			want: VerdictPass, line: "PASS (1/1)", count: Counts{Required: 1, RequiredPassed: 1, Passed: 1, NotSelected: 5}},
		{name: "--label-filter create --require create,rbac", rep: Report{Checks: checks("create:passed", "-scale:notSelected", "rbac:notSelected")},
			want: VerdictIncomplete, line: "INCOMPLETE (1/2: rbac is required but --label-filter left it out)"},
		{name: "an incomplete check that is not required still blocks a pass", rep: Report{Checks: checks("create:passed", "-rbac:incomplete")},
			want: VerdictIncomplete, line: "INCOMPLETE (1/1: rbac could not run: no --audit-log given)"},
		{name: "a failure outweighs everything", rep: Report{Checks: checks("create:passed", "scale:failed", "replace:notClaimed", "upgrade:failed", "rbac:incomplete", "cleanup:passed")},
			want: VerdictFail, line: "FAIL (2/6: scale, upgrade failed; replace is required but the profile does not claim it; rbac could not run: no --audit-log given)"},
		{name: "a check that is not required still fails the run", rep: Report{Checks: checks("create:passed", "-rbac:failed")},
			want: VerdictFail, line: "FAIL (1/1: rbac failed)"},
		{name: "nothing required", rep: Report{Checks: checks("-create:notSelected")},
			want: VerdictIncomplete, line: "INCOMPLETE (0/0: no check was required: nothing was certified)"},
		{name: "setup failed", rep: Report{SetupFailure: "operator not ready\nafter 3m", Checks: checks("create:incomplete", "scale:incomplete")},
			want: VerdictIncomplete, line: "INCOMPLETE (0/2: setup failed: operator not ready after 3m)"},
		{name: "interrupted after every check passed", rep: Report{SuiteFailures: []string{"interrupted"}, Checks: checks("create:passed")},
			want: VerdictIncomplete, line: "INCOMPLETE (1/1: the suite: interrupted)"},
	} {
		rep := tc.rep
		rep.Judge()
		if rep.Verdict != tc.want || rep.VerdictLine != tc.line || rep.Passed != (tc.want == VerdictPass) {
			t.Errorf("%s: verdict %s, passed %v, line %q; want %s, %q", tc.name, rep.Verdict, rep.Passed, rep.VerdictLine, tc.want, tc.line)
		}
		if tc.count != (Counts{}) && rep.Counts != tc.count {
			t.Errorf("%s: counts %+v, want %+v", tc.name, rep.Counts, tc.count)
		}
	}
}

func TestBriefKeepsTheVerdictLineShort(t *testing.T) {
	rep := Report{Checks: []*Check{{Name: "rbac", Required: true, State: Incomplete, Incomplete: strings.Repeat("x", 500)}}}
	rep.Judge()
	if n := len([]rune(rep.VerdictLine)); n > 260 {
		t.Errorf("verdict line has %d characters", n)
	}
}
