package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// Specs that must not pass or skip when they cannot observe anything, run
// through Ginkgo as the runner does (no cluster: each ends before one is
// needed). Each It gets its own input; the test reads its report afterwards.
var verdictReports = map[string]*report.Recorder{}

// verdictInput builds an It's env and report, keeping the report for the
// test.
func verdictInput(name, auditLog string, caps profile.Capabilities) (*framework.Env, *report.Recorder) {
	p := &profile.Profile{Operator: profile.Operator{Namespace: "ops", ServiceAccount: "op"}, Capabilities: caps}
	rep := report.NewRecorder()
	verdictReports[name] = rep
	return &framework.Env{Opts: framework.Options{AuditLog: auditLog}, Profile: p}, rep
}

func rbacInput(name, auditLog string) func() RBACSpecInput {
	return func() RBACSpecInput {
		e, rep := verdictInput(name, auditLog, profile.Capabilities{})
		return RBACSpecInput{Env: e, Report: rep, Started: time.Now()}
	}
}

var _ = Describe("verdicts", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("rbac without --audit-log", func(ctx SpecContext) {
		RBACSpec(ctx, rbacInput("rbac without --audit-log", ""))
	})
	It("rbac with an audit log that does not exist", func(ctx SpecContext) {
		RBACSpec(ctx, rbacInput("rbac with an audit log that does not exist", filepath.Join(dir, "gone.log")))
	})
	It("rbac with an audit log that is not JSON", func(ctx SpecContext) {
		path := filepath.Join(dir, "audit.log")
		Expect(os.WriteFile(path, []byte("not json\n"), 0o644)).To(Succeed())
		RBACSpec(ctx, rbacInput("rbac with an audit log that is not JSON", path))
	})
	It("rbac with an audit log without the operator", func(ctx SpecContext) {
		path := filepath.Join(dir, "audit.log")
		line := `{"user":{"username":"system:serviceaccount:kube-system:other"},"verb":"list","objectRef":{"resource":"pods"},"requestReceivedTimestamp":"` + time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z07:00") + `"}` + "\n"
		Expect(os.WriteFile(path, []byte(line), 0o644)).To(Succeed())
		RBACSpec(ctx, rbacInput("rbac with an audit log without the operator", path))
	})
	It("scale not claimed", func(ctx SpecContext) {
		e, rep := verdictInput("scale not claimed", "", profile.Capabilities{})
		ScaleSpec(ctx, func() ScaleSpecInput { return ScaleSpecInput{Env: e, Report: rep, Namespaces: e} })
	})
	It("replace not claimed", func(ctx SpecContext) {
		e, rep := verdictInput("replace not claimed", "", profile.Capabilities{})
		ReplaceSpec(ctx, func() ReplaceSpecInput { return ReplaceSpecInput{Env: e, Report: rep, Namespaces: e} })
	})
	It("insights not claimed", func(ctx SpecContext) {
		e, rep := verdictInput("insights not claimed", "", profile.Capabilities{DeadMemberReplacement: true})
		InsightsSpec(ctx, func() InsightsSpecInput { return InsightsSpecInput{Env: e, Report: rep, Namespaces: e} })
	})
	It("upgrade not claimed", func(ctx SpecContext) {
		e, rep := verdictInput("upgrade not claimed", "", profile.Capabilities{})
		UpgradeSpec(ctx, func() UpgradeSpecInput { return UpgradeSpecInput{Env: e, Report: rep, Namespaces: e} })
	})
	It("incomplete traffic, then a failure", func(ctx SpecContext) {
		_, rep := verdictInput("incomplete traffic, then a failure", "", profile.Capabilities{})
		expectTraffic(unreadTraffic(rep, "upgrade"), "to-3.5.21")
		Fail("the hop to 3.6.16 lost a write")
	})
	It("incomplete traffic, nothing else", func(ctx SpecContext) {
		_, rep := verdictInput("incomplete traffic, nothing else", "", profile.Capabilities{})
		expectTraffic(unreadTraffic(rep, "upgrade"), "to-3.5.21")
	})
	It("scale without a report", func(ctx SpecContext) {
		e, _ := verdictInput("scale without a report", "", profile.Capabilities{ScaleUp: true})
		ScaleSpec(ctx, func() ScaleSpecInput { return ScaleSpecInput{Env: e, Namespaces: e} })
	})
})

// unreadTraffic is a phase whose only problem is keys never read back.
func unreadTraffic(rep *report.Recorder, check string) phaseTraffic {
	var res framework.TrafficResult
	res.Incomplete, res.Failures = true, []string{"could not verify key k0"}
	return phaseTraffic{TrafficResult: res, report: rep, check: check}
}

// quietT collects Ginkgo's verdict without failing the go test: these
// specs are meant to fail or skip, and Ginkgo prints them so.
type quietT struct{}

func (quietT) Fail() {}

func TestSpecsThatCannotObserveAreIncompleteOrNotClaimed(t *testing.T) {
	RegisterFailHandler(Fail)
	var got types.Report
	ReportAfterSuite("collect", func(r Report) { got = r })
	suiteCfg, repCfg := GinkgoConfiguration()
	repCfg.Succinct = true
	RunSpecs(quietT{}, "specs verdicts", suiteCfg, repCfg)

	want := map[string]struct {
		check, reason string
		state         report.State
		ginkgo        types.SpecState
		// failure is what Ginkgo's failure must say, where a later step
		// failed after something was not observed.
		failure string
	}{
		// An incomplete phase does not end the spec: the failure after it
		// is what Ginkgo reports, and the runner makes the check FAIL.
		"incomplete traffic, then a failure": {"upgrade", "could not verify key k0", report.Incomplete, types.SpecStateFailed, "the hop to 3.6.16 lost a write"},
		// Nothing failed: Ginkgo passes, the runner makes the check INCOMPLETE.
		"incomplete traffic, nothing else":            {"upgrade", "could not verify key k0", report.Incomplete, types.SpecStatePassed, ""},
		"rbac without --audit-log":                    {"rbac", "no --audit-log given", report.Incomplete, types.SpecStateFailed, ""},
		"rbac with an audit log that does not exist":  {"rbac", "gone.log", report.Incomplete, types.SpecStateFailed, ""},
		"rbac with an audit log that is not JSON":     {"rbac", "cannot read the audit log", report.Incomplete, types.SpecStateFailed, ""},
		"rbac with an audit log without the operator": {"rbac", "has no request by system:serviceaccount:ops:op since the run started", report.Incomplete, types.SpecStateFailed, ""},
		"scale not claimed":                           {"scale", "profile does not claim scaleUp", report.NotClaimed, types.SpecStateSkipped, ""},
		"replace not claimed":                         {"replace", "profile does not claim deadMemberReplacement", report.NotClaimed, types.SpecStateSkipped, ""},
		"upgrade not claimed":                         {"upgrade", "profile does not claim upgrade", report.NotClaimed, types.SpecStateSkipped, ""},
		"insights not claimed":                        {"insights", "profile does not claim insights", report.NotClaimed, types.SpecStateSkipped, ""},
		"scale without a report":                      {"scale", "", report.State(""), types.SpecStateFailed, ""},
	}
	seen := 0
	for _, sr := range got.SpecReports {
		w, ok := want[sr.LeafNodeText]
		if sr.LeafNodeType != types.NodeTypeIt || !ok {
			continue
		}
		seen++
		if w.state == "" {
			// An invalid input fails the spec before it records anything.
			if sr.State != w.ginkgo || !strings.Contains(sr.Failure.Message, "Invalid argument. input.Report can't be nil") {
				t.Errorf("%s: Ginkgo %s (%q); want %s for the invalid input", sr.LeafNodeText, sr.State, sr.Failure.Message, w.ginkgo)
			}
			continue
		}
		c := verdictReports[sr.LeafNodeText].Check(w.check)
		if sr.State != w.ginkgo || c.State != w.state || !strings.Contains(c.Reason(), w.reason) {
			t.Errorf("%s: Ginkgo %s (%q), recorded %s (%q); want Ginkgo %s, recorded %s (%q)",
				sr.LeafNodeText, sr.State, sr.Failure.Message, c.State, c.Reason(), w.ginkgo, w.state, w.reason)
		}
		if w.failure != "" || w.ginkgo == types.SpecStatePassed {
			if !strings.Contains(sr.Failure.Message, w.failure) {
				t.Errorf("%s: Ginkgo failure %q, want %q", sr.LeafNodeText, sr.Failure.Message, w.failure)
			}
			continue
		}
		if w.state == report.Incomplete && (sr.Failure.Message != c.Incomplete || !OnlyIncomplete(sr)) {
			t.Errorf("%s: Ginkgo failure %q does not carry the recorded reason %q as an %s report entry", sr.LeafNodeText, sr.Failure.Message, c.Incomplete, IncompleteEntry)
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d of %d specs", seen, len(want))
	}
}
