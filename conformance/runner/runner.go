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
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/etcdproof/etcdproof/conformance/cluster"
	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
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
}

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
		if !slices.Contains(profile.CheckLabels, w) {
			return fmt.Errorf("--label-filter %q: unknown label %q; checks are %s", filter, w, strings.Join(profile.CheckLabels, ", "))
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
	return err == nil && f([]string{check})
}

// RequiredChecks is the set of checks that must pass: the --require list
// when given; otherwise the book's six checks and the fault checks the
// profile claims, or with a label filter those it selects (narrowing the run
// narrows what it certifies, and says so). A fault check a profile does not
// claim is reported as not claimed without failing the run: claiming it is
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

type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

// Run runs the suite and writes report.json, report.md and junit.xml.
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
	suite := &specs.Suite{Env: env, Report: report.NewRecorder()}
	specs.Register(cfg, func() *specs.Suite { return suite })
	gomega.RegisterFailHandler(ginkgo.Fail)

	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = o.LabelFilter
	suiteCfg.Timeout = o.Timeout
	repCfg.Verbose = true
	started := time.Now()
	t := &testingT{}
	ginkgo.RunSpecs(t, "etcdproof "+p.Name, suiteCfg, repCfg)

	rep := buildReport(ctx, o, env, suite, started)
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

func buildReport(ctx context.Context, o Options, env *framework.Env, s *specs.Suite, started time.Time) *report.Report {
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: env.Profile.Name, Started: started, Duration: report.Ms(time.Since(started))}
	// The run's context may be cancelled (interrupt); the fingerprint is still wanted.
	rep.Environment = environment(context.WithoutCancel(ctx), o, env)
	judgeSpecs(rep, s.Report, s.GinkgoReport, o.LabelFilter, RequiredChecks(o.LabelFilter, o.Require, env.Profile.Capabilities), s.SetupFailed)
	if ctx.Err() != nil && len(rep.SuiteFailures) == 0 {
		rep.SuiteFailures = append(rep.SuiteFailures, "interrupted before the end of the run")
		rep.Judge()
	}
	s.StopMemorySampler()
	if m := s.Memory; m != nil {
		rep.Operator = &report.OperatorUsage{PeakRSSBytes: m.PeakRSSBytes, PeakWorkingSetBytes: m.PeakWorkingSetBytes, Samples: m.Samples}
	}
	return rep
}

// judgeSpecs turns Ginkgo's spec reports and what the specs recorded into
// the checks' states, then judges the run.
func judgeSpecs(rep *report.Report, rec *report.Recorder, gr types.Report, filter string, required []string, setupFailed bool) {
	byLabel := map[string]types.SpecReport{}
	for _, sr := range gr.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			if sr.State.Is(types.SpecStateFailureStates) {
				rep.SuiteFailures = append(rep.SuiteFailures, fmt.Sprintf("%s: %s", sr.LeafNodeType, sr.Failure.Message))
			}
			continue
		}
		for _, l := range sr.Labels() {
			byLabel[l] = sr
		}
		if setupFailed && sr.Failure.FailureNodeType == types.NodeTypeBeforeAll && rep.SetupFailure == "" {
			rep.SetupFailure = sr.Failure.Message
		}
	}
	if setupFailed && rep.SetupFailure == "" {
		rep.SetupFailure = "could not install or start the operator"
	}
	rep.SuiteFailures = append(rep.SuiteFailures, gr.SpecialSuiteFailureReasons...)
	for _, name := range profile.CheckLabels {
		c := rec.Check(name)
		sr, ran := byLabel[name]
		c.Required = slices.Contains(required, name)
		c.Duration = report.Ms(sr.RunTime)
		c.State, c.Failure, c.Incomplete, c.Skipped = checkState(c, sr, ran, Selected(filter, name), setupFailed)
	}
	rep.Checks = rec.Checks(profile.CheckLabels)
	rep.Judge()
}

// checkState decides one check's state from its spec's outcome and what the
// spec recorded (c.State is Incomplete or NotClaimed when a spec said so),
// returning the state and its reasons. A check only passes when its spec
// passed and nothing marked it incomplete.
func checkState(c *report.Check, sr types.SpecReport, ran, selected, setupFailed bool) (state report.State, failure, incomplete, skipped string) {
	marked, markedWhy := c.State, c.Incomplete
	msg := sr.Failure.Message
	switch {
	case !selected:
		return report.NotSelected, "", "", "not selected by --label-filter"
	case !ran:
		return report.Incomplete, "", "did not run: no spec carries this label", ""
	case sr.State == types.SpecStatePassed && marked == report.Incomplete:
		// Incomplete was called but the spec went on (a recovered Fail):
		// what was not observed is still not observed.
		return report.Incomplete, "", markedWhy, ""
	case sr.State == types.SpecStatePassed:
		return report.Passed, "", "", ""
	case sr.State == types.SpecStateSkipped && marked == report.NotClaimed:
		return report.NotClaimed, "", "", c.Skipped
	case sr.State == types.SpecStateSkipped && setupFailed:
		return report.Incomplete, "", "did not run: setup failed", ""
	case sr.State == types.SpecStateSkipped && msg == "":
		// Selected, but Ginkgo never ran it: interrupted or --timeout.
		return report.Incomplete, "", "did not run: the run was interrupted or reached --timeout", ""
	case sr.State == types.SpecStateSkipped && strings.HasPrefix(msg, "Spec skipped because"):
		return report.Incomplete, "", "did not run: " + msg, ""
	case sr.State == types.SpecStateSkipped:
		// Skip() by the spec itself, on purpose (e.g. --skip-cleanup).
		return report.Skipped, "", "", msg
	case sr.State == types.SpecStatePending:
		return report.Skipped, "", "", "pending"
	case setupFailed && sr.Failure.FailureNodeType == types.NodeTypeBeforeAll:
		return report.Incomplete, "", "setup failed: " + msg, ""
	case sr.State.Is(types.SpecStateInterrupted | types.SpecStateAborted):
		return report.Incomplete, "", "interrupted: " + msg, ""
	case marked == report.Incomplete && onlyIncomplete(sr):
		return report.Incomplete, "", markedWhy, ""
	}
	failure = msg
	if sr.Failure.FailureNodeType != types.NodeTypeIt {
		failure = fmt.Sprintf("%s in %s", msg, sr.Failure.FailureNodeType)
	}
	if marked == report.Incomplete {
		// A real failure outweighs what could not be observed; keep both.
		c.Notes = append(c.Notes, "also could not observe: "+markedWhy)
	}
	return report.Failed, failure, "", ""
}

// onlyIncomplete: every failure of the spec came from specs.Incomplete.
func onlyIncomplete(sr types.SpecReport) bool {
	if !strings.HasPrefix(sr.Failure.Message, specs.IncompletePrefix) {
		return false
	}
	for _, f := range sr.AdditionalFailures {
		if !strings.HasPrefix(f.Failure.Message, specs.IncompletePrefix) {
			return false
		}
	}
	return true
}

func environment(ctx context.Context, o Options, env *framework.Env) report.Environment {
	e := report.Environment{Kubernetes: env.ServerVersion, Operator: env.Profile.Operator.Version, Suite: suiteVersion()}
	e.Kind = kindVersion(env.Opts.Context)
	e.Etcd = etcdVersions(env.Profile)
	return e
}

func writeReports(dir string, rep *report.Report, gr types.Report) error {
	errs := []error{
		rep.WriteJSON(filepath.Join(dir, "report.json")),
		os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644),
	}
	if len(gr.SpecReports) > 0 {
		errs = append(errs, reporters.GenerateJUnitReport(gr, filepath.Join(dir, "junit.xml")))
	}
	return errors.Join(errs...)
}

// etcdVersions are the releases a profile runs, oldest first.
func etcdVersions(p *profile.Profile) []string {
	var out []string
	for _, v := range append([]string{p.Etcd.Initial}, p.UpgradeVersions()...) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		va, err := version.ParseGeneric(a)
		if err != nil {
			return strings.Compare(a, b)
		}
		c, err := va.Compare(b)
		if err != nil {
			return strings.Compare(a, b)
		}
		return c
	})
	return out
}
