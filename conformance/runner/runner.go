// Package runner runs the conformance specs inside the etcdproof binary
// (Ginkgo's RunSpecs with our own config), then writes the reports. The
// exit code is 0 pass, 1 fail, 2 could not run.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

// Exit codes.
const (
	ExitPass     = 0
	ExitFail     = 1
	ExitCouldNot = 2
)

// Options are the validated inputs of `etcdproof run`.
type Options struct {
	Framework   framework.Options
	ProfilePath string
	ConfigPath  string
	LabelFilter string
	// Kind is the kind binary, used only for the environment fingerprint.
	Kind    string
	Timeout time.Duration
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
	env, err := framework.NewEnv(ctx, o.Framework, p, cfg)
	if err != nil {
		return couldNot(err)
	}
	images := append(slices.Clone(p.Images), o.Framework.TrafficImage)
	if err := env.EnsureImages(ctx, images, cfg.Timeout("install", "image-pull")); err != nil {
		return couldNot(err)
	}
	suite := &specs.Suite{Env: env, Report: report.NewRecorder()}
	specs.Register(func() *specs.Suite { return suite })
	gomega.RegisterFailHandler(ginkgo.Fail)

	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = o.LabelFilter
	suiteCfg.Timeout = o.Timeout
	repCfg.Verbose = true
	started := time.Now()
	t := &testingT{}
	ginkgo.RunSpecs(t, "etcdproof "+p.Name, suiteCfg, repCfg)

	rep := buildReport(ctx, o, env, suite, started)
	if err := writeReports(o.Framework.ReportDir, rep, suite.GinkgoReport); err != nil {
		return couldNot(err)
	}
	fmt.Printf("\nreports: %s\n", o.Framework.ReportDir)
	fmt.Print(rep.Markdown())
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "etcdproof: interrupted; the results above are incomplete")
		return ExitCouldNot
	case suite.SetupFailed:
		fmt.Fprintln(os.Stderr, "etcdproof: could not install or start the operator; see the report")
		return ExitCouldNot
	case ranNothing(rep):
		fmt.Fprintf(os.Stderr, "etcdproof: --label-filter %q selected no check\n", o.LabelFilter)
		return ExitCouldNot
	case !rep.Passed || t.failed:
		return ExitFail
	}
	return ExitPass
}

func couldNot(err error) int {
	fmt.Fprintf(os.Stderr, "etcdproof: %v\n", err)
	return ExitCouldNot
}

func ranNothing(rep *report.Report) bool {
	for _, c := range rep.Checks {
		if c.State == "passed" || c.State == "failed" {
			return false
		}
	}
	return true
}

func buildReport(ctx context.Context, o Options, env *framework.Env, s *specs.Suite, started time.Time) *report.Report {
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Profile: env.Profile.Name, Started: started, Duration: report.Ms(time.Since(started)), Passed: true}
	// The run's context may be cancelled (interrupt); the fingerprint is still wanted.
	rep.Environment = environment(context.WithoutCancel(ctx), o, env)
	byLabel := map[string]types.SpecReport{}
	for _, sr := range s.GinkgoReport.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			if sr.State.Is(types.SpecStateFailureStates) {
				rep.Passed = false
			}
			continue
		}
		for _, l := range sr.Labels() {
			byLabel[l] = sr
		}
	}
	for _, name := range profile.CheckLabels {
		c := s.Report.Check(name)
		sr, ok := byLabel[name]
		if !ok {
			c.State = "skipped"
			continue
		}
		c.Duration = report.Ms(sr.RunTime)
		switch {
		case sr.State == types.SpecStatePassed:
			c.State = "passed"
		case sr.State == types.SpecStateSkipped && sr.Failure.Message == "":
			c.State, c.Skipped = "skipped", "not selected by --label-filter"
		case sr.State == types.SpecStateSkipped:
			c.State, c.Skipped = "skipped", sr.Failure.Message
		default:
			c.State, c.Failure = "failed", sr.Failure.Message
			if sr.Failure.FailureNodeType != types.NodeTypeIt {
				c.Failure = fmt.Sprintf("%s in %s", sr.Failure.Message, sr.Failure.FailureNodeType)
			}
			rep.Passed = false
		}
	}
	rep.Checks = s.Report.Checks(profile.CheckLabels)
	s.StopMemorySampler()
	if m := s.Memory; m != nil {
		rep.Operator = &report.OperatorUsage{PeakRSSBytes: m.PeakRSSBytes, PeakWorkingSetBytes: m.PeakWorkingSetBytes, Samples: m.Samples}
	}
	return rep
}

func environment(ctx context.Context, o Options, env *framework.Env) report.Environment {
	e := report.Environment{Kubernetes: env.ServerVersion, Operator: env.Profile.Operator.Version, Suite: suiteVersion()}
	if o.Kind != "" {
		if out, err := exec.CommandContext(ctx, o.Kind, "version").Output(); err == nil {
			// "kind v0.33.0 go1.26.8 linux/amd64": the version is what matters.
			e.Kind = strings.TrimSpace(string(out))
			if f := strings.Fields(e.Kind); len(f) >= 2 && f[0] == "kind" {
				e.Kind = f[1]
			}
		}
	}
	seen := map[string]bool{}
	for _, v := range append([]string{env.Profile.Etcd.Initial}, env.Profile.UpgradeVersions()...) {
		if !seen[v] {
			seen[v] = true
			e.Etcd = append(e.Etcd, v)
		}
	}
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
