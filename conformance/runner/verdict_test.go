package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

func it(label string, state types.SpecState, msg string, node types.NodeType) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeLabels: []string{label}, State: state,
		Failure: types.Failure{Message: msg, FailureNodeType: node}}
}

// incompleteIt is a spec ended by specs.Incomplete with reason.
func incompleteIt(label, reason string) types.SpecReport {
	sr := it(label, types.SpecStateFailed, reason, types.NodeTypeIt)
	sr.ReportEntries = types.ReportEntries{{Name: specs.IncompleteEntry, Value: types.WrapEntryValue(reason)}}
	return sr
}

func passedIt(label string) types.SpecReport {
	return it(label, types.SpecStatePassed, "", types.NodeTypeInvalid)
}

// The Ginkgo outcomes of a run; mark lets a test record what specs record.
type outcome struct {
	specs  []types.SpecReport
	mark   func(*report.Recorder)
	filter string
	// require is --require (nil: default); claims the profile's capabilities.
	require     []string
	claims      profile.Capabilities
	setupFailed bool
	// nodes is the cluster's schedulable nodes; 0 for not counted.
	nodes int
}

func (o outcome) judge() *report.Report {
	rec := report.NewRecorder()
	for _, c := range profile.ClaimedChecks {
		if !o.claims.Claims(c) {
			rec.NotClaimed(c, "profile does not claim "+c) // as the spec does
		}
	}
	if o.mark != nil {
		o.mark(rec)
	}
	nodes := o.nodes
	if nodes == 0 {
		nodes = UnknownNodes
	}
	sel := Select(o.filter, o.require, profile.Sizes{NodeLoss: 3, Drain: 3}, nodes)
	rep := &report.Report{}
	judgeSpecs(rep, rec, types.Report{SpecReports: o.specs}, sel, RequiredChecks(sel, o.require, o.claims), o.setupFailed)
	return rep
}

func states(rep *report.Report) map[string]report.State {
	out := map[string]report.State{}
	for _, c := range rep.Checks {
		out[c.Name] = c.State
	}
	return out
}

// allPassedBut is a run where every check passed but label, whose spec
// report is sr; the checks run only when claimed (the fault checks and
// insights), which no outcome claims unless it says so, skip as not
// claimed (see judge), but those asked of every profile (space).
func allPassedBut(label string, sr types.SpecReport) []types.SpecReport {
	var out []types.SpecReport
	for _, l := range profile.CheckLabels {
		switch {
		case l == label:
			out = append(out, sr)
		case slices.Contains(profile.ClaimedChecks, l) && !(profile.Capabilities{}).Claims(l):
			out = append(out, it(l, types.SpecStateSkipped, "profile does not claim "+l, types.NodeTypeIt))
		default:
			out = append(out, passedIt(l))
		}
	}
	return out
}

// Each case reproduces a run the v1 model judged wrongly (mostly: PASS).
func TestJudgeSpecsNeverPassesVacuously(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     outcome
		check string
		want  report.State
		// reason is a substring of the check's reason.
		reason  string
		verdict report.Verdict
		exit    int
	}{
		{name: "every check passed", o: outcome{specs: allPassedBut("", types.SpecReport{})},
			check: "rbac", want: report.Passed, verdict: report.VerdictPass, exit: ExitPass},
		{name: "a fault check not claimed does not count", o: outcome{specs: allPassedBut("", types.SpecReport{})},
			check: "kill", want: report.NotClaimed, reason: "does not claim kill", verdict: report.VerdictPass, exit: ExitPass},
		{name: "a fault check claimed and passed", o: outcome{claims: profile.Capabilities{Kill: true}, specs: allPassedBut("kill", passedIt("kill"))},
			check: "kill", want: report.Passed, verdict: report.VerdictPass, exit: ExitPass},
		{name: "a fault check claimed and failed", o: outcome{claims: profile.Capabilities{Kill: true},
			specs: allPassedBut("kill", it("kill", types.SpecStateFailed, "recovery-leader took 4m", types.NodeTypeIt))},
			check: "kill", want: report.Failed, reason: "recovery-leader", verdict: report.VerdictFail, exit: ExitFail},
		{name: "rbac without an audit log (v1: skipped, PASS)",
			o: outcome{specs: allPassedBut("rbac", incompleteIt("rbac", "no --audit-log given")),
				mark: func(r *report.Recorder) { r.Incomplete("rbac", "no --audit-log given") }},
			check: "rbac", want: report.Incomplete, reason: "no --audit-log given", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "a profile that claims no scaling (v1: skipped, PASS)",
			o: outcome{specs: allPassedBut("scale", it("scale", types.SpecStateSkipped, "profile does not claim scaleUp", types.NodeTypeIt)),
				mark: func(r *report.Recorder) { r.NotClaimed("scale", "profile does not claim scaleUp") }},
			check: "scale", want: report.NotClaimed, reason: "scaleUp", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "a check the suite never reached (v1: 'not selected by --label-filter')",
			o:     outcome{specs: allPassedBut("cleanup", it("cleanup", types.SpecStateSkipped, "", types.NodeTypeInvalid))},
			check: "cleanup", want: report.Incomplete, reason: "interrupted or reached --timeout", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "--skip-cleanup", o: outcome{specs: allPassedBut("cleanup", it("cleanup", types.SpecStateSkipped, "--skip-cleanup leaves resources in place on purpose", types.NodeTypeIt))},
			check: "cleanup", want: report.Skipped, reason: "--skip-cleanup", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "--skip-cleanup --require create,rbac", o: outcome{require: []string{"create", "rbac"},
			specs: allPassedBut("cleanup", it("cleanup", types.SpecStateSkipped, "--skip-cleanup leaves resources in place on purpose", types.NodeTypeIt))},
			check: "cleanup", want: report.Skipped, verdict: report.VerdictPass, exit: ExitPass},
		{name: "--label-filter create alone", o: outcome{filter: "create", specs: allPassedBut("rbac", it("rbac", types.SpecStateSkipped, "", types.NodeTypeInvalid))},
			check: "rbac", want: report.NotSelected, reason: "not selected by --label-filter", verdict: report.VerdictPass, exit: ExitPass},
		{name: "--label-filter create --require create,rbac", o: outcome{filter: "create", require: []string{"create", "rbac"}, specs: allPassedBut("rbac", it("rbac", types.SpecStateSkipped, "", types.NodeTypeInvalid))},
			check: "rbac", want: report.NotSelected, verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "one node: node-loss not selected, not required (was: that from make e2e, INCOMPLETE from etcdproof run)",
			o:     outcome{nodes: 1, claims: profile.Capabilities{NodeLoss: true}, specs: allPassedBut("node-loss", it("node-loss", types.SpecStateSkipped, "", types.NodeTypeInvalid))},
			check: "node-loss", want: report.NotSelected, reason: "needs 3 workers (one member on each), the cluster has 1 schedulable node", verdict: report.VerdictPass, exit: ExitPass},
		{name: "one node, --label-filter node-loss: asked for by name, it runs and is INCOMPLETE",
			o: outcome{nodes: 1, filter: "node-loss", claims: profile.Capabilities{NodeLoss: true},
				specs: []types.SpecReport{incompleteIt("node-loss", "the kind cluster has 0 worker nodes")},
				mark:  func(r *report.Recorder) { r.Incomplete("node-loss", "the kind cluster has 0 worker nodes") }},
			check: "node-loss", want: report.Incomplete, reason: "0 worker nodes", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "a failure that reads like an incomplete one is a failure: the verdict is the spec's report entry, not its words",
			o: outcome{specs: allPassedBut("rbac", it("rbac", types.SpecStateFailed, "INCOMPLETE: no --audit-log given", types.NodeTypeIt)),
				mark: func(r *report.Recorder) { r.Incomplete("rbac", "no --audit-log given") }},
			check: "rbac", want: report.Failed, reason: "no --audit-log given", verdict: report.VerdictFail, exit: ExitFail},
		{name: "a real failure after Incomplete was recorded",
			o: outcome{specs: allPassedBut("cleanup", it("cleanup", types.SpecStateFailed, "objects left behind", types.NodeTypeIt)),
				mark: func(r *report.Recorder) { r.Incomplete("cleanup", "events not listed") }},
			check: "cleanup", want: report.Failed, reason: "objects left behind", verdict: report.VerdictFail, exit: ExitFail},
		{name: "Incomplete recorded but the spec went on and passed",
			o:     outcome{specs: allPassedBut("", types.SpecReport{}), mark: func(r *report.Recorder) { r.Incomplete("rbac", "audit log rotated away") }},
			check: "rbac", want: report.Incomplete, reason: "rotated away", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
		{name: "a failure is a failure", o: outcome{specs: allPassedBut("replace", it("replace", types.SpecStateFailed, "stale member", types.NodeTypeIt))},
			check: "replace", want: report.Failed, reason: "stale member", verdict: report.VerdictFail, exit: ExitFail},
		{name: "a timeout is a failure", o: outcome{specs: allPassedBut("upgrade", it("upgrade", types.SpecStateTimedout, "A spec timeout occurred", types.NodeTypeIt))},
			check: "upgrade", want: report.Failed, verdict: report.VerdictFail, exit: ExitFail},
		{name: "the operator never became ready (v1: create failed)", o: outcome{setupFailed: true, filter: "create||scale", specs: []types.SpecReport{
			it("create", types.SpecStateFailed, "operator not ready", types.NodeTypeBeforeAll),
			it("scale", types.SpecStateSkipped, "Spec skipped because a BeforeAll node failed", types.NodeTypeIt),
			it("rbac", types.SpecStateSkipped, "", types.NodeTypeInvalid)}},
			check: "scale", want: report.Incomplete, reason: "setup failed", verdict: report.VerdictIncomplete, exit: ExitCouldNot},
	} {
		rep := tc.o.judge()
		c := rep.Checks[slices.IndexFunc(rep.Checks, func(c *report.Check) bool { return c.Name == tc.check })]
		if c.State != tc.want || !strings.Contains(c.Reason(), tc.reason) {
			t.Errorf("%s: %s is %s (%q), want %s (%q)", tc.name, tc.check, c.State, c.Reason(), tc.want, tc.reason)
		}
		if rep.Verdict != tc.verdict || ExitCode(rep.Verdict) != tc.exit {
			t.Errorf("%s: verdict %q, exit %d; want %s, %d (states %v)", tc.name, rep.VerdictLine, ExitCode(rep.Verdict), tc.verdict, tc.exit, states(rep))
		}
	}
}

func TestSetupFailureIsNamedOnce(t *testing.T) {
	rep := outcome{setupFailed: true, specs: []types.SpecReport{
		it("create", types.SpecStateFailed, "operator not ready", types.NodeTypeBeforeAll),
		it("scale", types.SpecStateSkipped, "Spec skipped because a BeforeAll node failed", types.NodeTypeIt),
	}}.judge()
	if rep.SetupFailure != "operator not ready" || rep.VerdictLine != "INCOMPLETE (0/7: setup failed: operator not ready)" {
		t.Errorf("setup failure %q, verdict %q", rep.SetupFailure, rep.VerdictLine)
	}
}

func TestRequiredChecks(t *testing.T) {
	for _, tc := range []struct {
		filter  string
		require []string
		want    string
		claims  profile.Capabilities
	}{
		// space is asked of every profile (a full disk is no claim).
		{"", nil, "create,scale,replace,space,upgrade,rbac,cleanup", profile.Capabilities{}},
		{"", nil, "create,scale,replace,kill,space,upgrade,rbac,cleanup", profile.Capabilities{Kill: true}},
		{"create", nil, "create", profile.Capabilities{}},
		{"kill", nil, "", profile.Capabilities{}},
		{"kill", nil, "kill", profile.Capabilities{Kill: true}},
		{"", nil, "create,scale,replace,quorum-loss,operator-crash,space,upgrade,rbac,cleanup",
			profile.Capabilities{QuorumLoss: profile.QuorumLossLossy, OperatorCrash: true}},
		{"create || (scale && !upgrade)", nil, "create,scale", profile.Capabilities{}},
		{"!rbac", nil, "create,scale,replace,space,upgrade,cleanup", profile.Capabilities{}},
		{"create", []string{"create", "rbac"}, "create,rbac", profile.Capabilities{}},
		{"create && scale", nil, "", profile.Capabilities{}},
	} {
		if got := strings.Join(RequiredChecks(Select(tc.filter, tc.require, profile.Sizes{}, UnknownNodes), tc.require, tc.claims), ","); got != tc.want {
			t.Errorf("filter %q, require %v: %q, want %q", tc.filter, tc.require, got, tc.want)
		}
	}
}

func TestParseRequire(t *testing.T) {
	if got, err := ParseRequire(" create, rbac,create "); err != nil || strings.Join(got, ",") != "create,rbac" {
		t.Errorf("got %v, %v", got, err)
	}
	for value, want := range map[string]string{"": "names no check", " , ": "names no check", "create,speed": `unknown check "speed"`} {
		if _, err := ParseRequire(value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", value, err, want)
		}
	}
}

// The report's fingerprint lists the releases oldest first, whatever the
// order of initial and the chain in the profile.
func TestEtcdVersionsOldestFirst(t *testing.T) {
	p := &profile.Profile{
		Etcd:         profile.Etcd{Initial: "3.6.16", UpgradeTo: "3.7.3", UpgradeChain: []string{"3.4.25", "3.5.21", "3.6.16", "3.7.3"}},
		Capabilities: profile.Capabilities{Upgrade: true, UpgradeChain: true},
	}
	if got, want := etcdVersions(p), []string{"3.4.25", "3.5.21", "3.6.16", "3.7.3"}; !slices.Equal(got, want) {
		t.Fatalf("etcdVersions = %v, want %v", got, want)
	}
}
