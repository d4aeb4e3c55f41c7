// Package runner runs the conformance specs inside the etcdproof binary
// (Ginkgo's RunSpecs with our own config), turns each spec's outcome into a
// check state, judges the run and writes the reports. The exit code is 0
// pass, 1 fail, 2 incomplete or could not run.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/etcdproof/etcdproof/conformance/cluster"
	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	reporthtml "github.com/etcdproof/etcdproof/conformance/report/html"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

// Exit codes.
const (
	// ExitPass: every required check passed, none failed or was incomplete.
	ExitPass = 0
	// ExitFail: a check failed.
	ExitFail = 1
	// ExitCouldNot: the run could not judge the operator: bad input, setup
	// failed, a check was incomplete or a required check did not run.
	ExitCouldNot = 2
)

// ExitCode maps a verdict to the process's exit code.
func ExitCode(v report.Verdict) int {
	switch v {
	case report.VerdictPass:
		return ExitPass
	case report.VerdictFail:
		return ExitFail
	}
	return ExitCouldNot
}

// Options are the validated inputs of `etcdproof run`.
type Options struct {
	Framework   framework.Options
	ProfilePath string
	ConfigPath  string
	LabelFilter string
	// Require lists the checks that must pass; nil means the default (see
	// RequiredChecks).
	Require []string
	Timeout time.Duration
	// Cluster says whether the run creates its kind cluster (ClusterSpec)
	// or uses the one Framework points at.
	Cluster     ClusterMode
	ClusterSpec cluster.Spec
	// Floor also measures the floor (specs.FloorSpec) into report.json's
	// floor, whatever LabelFilter selects.
	Floor bool
}

// testingT stands in for the *testing.T RunSpecs wants, since the suite runs
// inside the etcdproof binary rather than under go test; it only remembers
// whether Ginkgo failed the suite.
type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

// Run runs the suite and writes report.json, report.md, report.html and
// junit.xml.
func Run(ctx context.Context, o Options) int {
	p, err := profile.Load(o.ProfilePath)
	if err != nil {
		return couldNot(err)
	}
	cfg, err := profile.LoadConfig(o.ConfigPath)
	if err != nil {
		return couldNot(err)
	}
	if err := os.MkdirAll(o.Framework.ReportDir, 0o755); err != nil {
		return couldNot(fmt.Errorf("--report-dir: %w", err))
	}
	restoreLogs, err := routeClientGoLogs(filepath.Join(o.Framework.ReportDir, ClientGoLog))
	if err != nil {
		return couldNot(err)
	}
	defer restoreLogs()
	images := append(slices.Clone(p.Images), o.Framework.TrafficImage)
	teardown, err := provideCluster(ctx, &o, images)
	if err != nil {
		return couldNot(err)
	}
	defer teardown()
	env, err := framework.NewEnv(ctx, o.Framework, p, cfg)
	if err != nil {
		return couldNot(err)
	}
	if err := env.EnsureImages(ctx, images, cfg.Timeout("install", "image-pull")); err != nil {
		return couldNot(err)
	}
	// Before the specs: a check the cluster has too few nodes for is left
	// out here, so make e2e and etcdproof run judge a cluster alike.
	sel := Select(o.LabelFilter, o.Require, cfg.Sizes, countNodes(ctx, env.Kube))
	suite := &specs.Suite{Env: env, Report: report.NewRecorder()}
	specs.Register(cfg, func() *specs.Suite { return suite }, o.Floor)
	gomega.RegisterFailHandler(ginkgo.Fail)
	lines := checkLines{w: os.Stdout, rec: suite.Report, cfg: cfg, sel: sel, setupFailed: func() bool { return suite.SetupFailed }}
	ginkgo.ReportAfterEach(lines.specEnded)
	lines.leftOut()

	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = sel.GinkgoFilter()
	if o.Floor && suiteCfg.LabelFilter != "" {
		suiteCfg.LabelFilter = "(" + suiteCfg.LabelFilter + ") || " + specs.FloorCheck
	}
	suiteCfg.Timeout = o.Timeout
	repCfg.Verbose = true
	started := time.Now()
	t := &testingT{}
	ginkgo.RunSpecs(t, "etcdproof "+p.Name, suiteCfg, repCfg)

	rep := buildReport(ctx, o, env, sel, suite, started)
	if t.failed && rep.Verdict == report.VerdictPass {
		// Ginkgo saw a failure no check accounts for: never a pass.
		rep.SuiteFailures = append(rep.SuiteFailures, "Ginkgo reported the suite as failed; see junit.xml")
		rep.Judge()
	}
	if err := writeReports(o.Framework.ReportDir, rep, suite.GinkgoReport); err != nil {
		return couldNot(err)
	}
	fmt.Printf("\nreports: %s\n", o.Framework.ReportDir)
	fmt.Print(rep.Markdown())
	fmt.Printf("\netcdproof: %s\n", rep.VerdictLine)
	if rep.Capability != nil {
		fmt.Printf("etcdproof: %s\n", rep.Capability.Line())
	}
	switch {
	case rep.SetupFailure != "":
		fmt.Fprintln(os.Stderr, "etcdproof: could not install or start the operator; see the report")
	case rep.Counts.Required == 0:
		fmt.Fprintf(os.Stderr, "etcdproof: --label-filter %q selected no check\n", o.LabelFilter)
	}
	return ExitCode(rep.Verdict)
}

func couldNot(err error) int {
	fmt.Fprintf(os.Stderr, "etcdproof: %v\n", err)
	return ExitCouldNot
}

func buildReport(ctx context.Context, o Options, env *framework.Env, sel Selection, s *specs.Suite, started time.Time) *report.Report {
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: env.Profile.Name, Started: started, Duration: report.Ms(time.Since(started))}
	// The run's context may be cancelled (interrupt); the fingerprint is still wanted.
	rep.Environment = environment(context.WithoutCancel(ctx), o, env)
	judgeSpecs(rep, s.Report, s.GinkgoReport, sel, RequiredChecks(sel, o.Require, env.Profile.Capabilities), s.SetupFailed)
	if ctx.Err() != nil && len(rep.SuiteFailures) == 0 {
		rep.SuiteFailures = append(rep.SuiteFailures, "interrupted before the end of the run")
		rep.Judge()
	}
	rep.ProveCapability(env.Profile.CapabilityLevel)
	if o.Floor {
		rep.Floor = floorOf(s.Report, s.GinkgoReport)
	}
	s.StopMemorySampler()
	if m := s.Memory; m != nil {
		rep.Operator = &report.OperatorUsage{PeakRSSBytes: m.PeakRSSBytes, PeakWorkingSetBytes: m.PeakWorkingSetBytes, Samples: m.Samples}
	}
	return rep
}

func writeReports(dir string, rep *report.Report, gr types.Report) error {
	errs := []error{
		rep.WriteJSON(filepath.Join(dir, "report.json")),
		os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644),
	}
	if len(gr.SpecReports) > 0 {
		errs = append(errs, reporters.GenerateJUnitReport(gr, filepath.Join(dir, "junit.xml")))
	}
	// report.html is for people; report.json and junit.xml carry the
	// verdict, so a page that cannot be written costs the run nothing
	// (`etcdproof report html` can make it later).
	if err := reporthtml.Write(dir, rep); err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof: %s not written: %v\n", reporthtml.FileName, err)
	}
	return errors.Join(errs...)
}
