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
// needed). Each It gets its own Suite; the test reads both afterwards.
var verdictSuites = map[string]*Suite{}

func verdictSuite(name, auditLog string, caps profile.Capabilities) *Suite {
	p := &profile.Profile{Operator: profile.Operator{Namespace: "ops", ServiceAccount: "op"}, Capabilities: caps}
	s := &Suite{Env: &framework.Env{Opts: framework.Options{AuditLog: auditLog}, Profile: p}, Report: report.NewRecorder(), Started: time.Now()}
	verdictSuites[name] = s
	return s
}

var _ = Describe("verdicts", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("rbac without --audit-log", func(ctx SpecContext) {
		RBACSpec(ctx, verdictSuite("rbac without --audit-log", "", profile.Capabilities{}))
	})
	It("rbac with an audit log that does not exist", func(ctx SpecContext) {
		RBACSpec(ctx, verdictSuite("rbac with an audit log that does not exist", filepath.Join(dir, "gone.log"), profile.Capabilities{}))
	})
	It("rbac with an audit log that is not JSON", func(ctx SpecContext) {
		path := filepath.Join(dir, "audit.log")
		Expect(os.WriteFile(path, []byte("not json\n"), 0o644)).To(Succeed())
		RBACSpec(ctx, verdictSuite("rbac with an audit log that is not JSON", path, profile.Capabilities{}))
	})
	It("rbac with an audit log without the operator", func(ctx SpecContext) {
		path := filepath.Join(dir, "audit.log")
		line := `{"user":{"username":"system:serviceaccount:kube-system:other"},"verb":"list","objectRef":{"resource":"pods"},"requestReceivedTimestamp":"` + time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z07:00") + `"}` + "\n"
		Expect(os.WriteFile(path, []byte(line), 0o644)).To(Succeed())
		RBACSpec(ctx, verdictSuite("rbac with an audit log without the operator", path, profile.Capabilities{}))
	})
	It("scale not claimed", func(ctx SpecContext) {
		ScaleSpec(ctx, verdictSuite("scale not claimed", "", profile.Capabilities{}))
	})
	It("replace not claimed", func(ctx SpecContext) {
		ReplaceSpec(ctx, verdictSuite("replace not claimed", "", profile.Capabilities{}))
	})
	It("upgrade not claimed", func(ctx SpecContext) {
		UpgradeSpec(ctx, verdictSuite("upgrade not claimed", "", profile.Capabilities{}))
	})
})

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
	}{
		"rbac without --audit-log":                    {"rbac", "no --audit-log given", report.Incomplete, types.SpecStateFailed},
		"rbac with an audit log that does not exist":  {"rbac", "gone.log", report.Incomplete, types.SpecStateFailed},
		"rbac with an audit log that is not JSON":     {"rbac", "cannot read the audit log", report.Incomplete, types.SpecStateFailed},
		"rbac with an audit log without the operator": {"rbac", "has no request by system:serviceaccount:ops:op since the run started", report.Incomplete, types.SpecStateFailed},
		"scale not claimed":                           {"scale", "profile does not claim scaleUp", report.NotClaimed, types.SpecStateSkipped},
		"replace not claimed":                         {"replace", "profile does not claim deadMemberReplacement", report.NotClaimed, types.SpecStateSkipped},
		"upgrade not claimed":                         {"upgrade", "profile does not claim upgrade", report.NotClaimed, types.SpecStateSkipped},
	}
	seen := 0
	for _, sr := range got.SpecReports {
		w, ok := want[sr.LeafNodeText]
		if sr.LeafNodeType != types.NodeTypeIt || !ok {
			continue
		}
		seen++
		c := verdictSuites[sr.LeafNodeText].Report.Check(w.check)
		if sr.State != w.ginkgo || c.State != w.state || !strings.Contains(c.Reason(), w.reason) {
			t.Errorf("%s: Ginkgo %s (%q), recorded %s (%q); want Ginkgo %s, recorded %s (%q)",
				sr.LeafNodeText, sr.State, sr.Failure.Message, c.State, c.Reason(), w.ginkgo, w.state, w.reason)
		}
		if w.state == report.Incomplete && sr.Failure.Message != IncompletePrefix+c.Incomplete {
			t.Errorf("%s: Ginkgo failure %q does not carry the recorded reason %q", sr.LeafNodeText, sr.Failure.Message, c.Incomplete)
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d of %d specs", seen, len(want))
	}
}
