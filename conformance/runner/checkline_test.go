package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// The terminal says each check's verdict as its spec ends, the same one
// the report will give: a spec that passed but could not observe what it
// judges is INCOMPLETE there too, not passed.
func TestEachCheckGetsOneLineWithItsVerdictAndTime(t *testing.T) {
	cfg, err := profile.LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := report.NewRecorder()
	rec.Incomplete("scale", "no audit log")
	rec.Incomplete("replace", "the quorum sampler never connected")
	rec.NotClaimed("drain", "profile does not claim drain")
	var out bytes.Buffer
	lines := checkLines{w: &out, rec: rec, cfg: cfg, sel: Select("!rbac", nil, cfg.Sizes, UnknownNodes), setupFailed: func() bool { return false }}

	ran := func(sr types.SpecReport, took time.Duration) types.SpecReport { sr.RunTime = took; return sr }
	lines.specEnded(ran(passedIt("floor"), 31*time.Second)) // asked for with --floor: printed whatever the filter
	lines.specEnded(ran(passedIt("create"), 22900*time.Millisecond))
	lines.specEnded(ran(passedIt("scale"), 40*time.Second))
	lines.specEnded(ran(it("replace", types.SpecStateFailed, "member pods: 2 of 3 ready\nmore detail", types.NodeTypeIt), 93*time.Second))
	lines.specEnded(it("drain", types.SpecStateSkipped, "profile does not claim drain", types.NodeTypeIt))
	lines.specEnded(passedIt("rbac")) // not selected: nothing
	lines.specEnded(types.SpecReport{LeafNodeType: types.NodeTypeBeforeAll})

	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"etcdproof: floor            passed         31.0 s of " + cfg.SpecTimeout("floor").String(),
		"etcdproof: create           passed         22.9 s of " + cfg.SpecTimeout("create").String(),
		"etcdproof: scale            INCOMPLETE     40.0 s of " + cfg.SpecTimeout("scale").String() + ": no audit log",
		"etcdproof: replace          failed         93.0 s of " + cfg.SpecTimeout("replace").String() + ": member pods: 2 of 3 ready",
		"etcdproof: drain            not claimed: profile does not claim drain",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("terminal lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Saying the verdict early must not change the report's.
	if n := len(rec.Check("replace").Notes); n != 0 {
		t.Errorf("replace has %d notes after its line was printed, want 0", n)
	}
}

// A check left out for want of nodes gets its line before the specs run,
// saying why, as its report row does.
func TestChecksLeftOutForWantOfNodesGetOneLineEach(t *testing.T) {
	cfg, err := profile.LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	checkLines{w: &out, cfg: cfg, sel: Select("", nil, cfg.Sizes, 1)}.leftOut()
	want := "etcdproof: node-loss        not selected: needs 3 workers (one member on each), the cluster has 1 schedulable node\n" +
		"etcdproof: drain            not selected: needs 3 workers (one member on each), the cluster has 1 schedulable node\n" +
		"etcdproof: drain-during-rollout not selected: needs 3 workers (one member on each), the cluster has 1 schedulable node\n"
	if out.String() != want {
		t.Errorf("terminal lines:\n%s\nwant:\n%s", out.String(), want)
	}
}
