package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/bench"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

// benchChecks are the checks that measure time; rbac and cleanup do not.
const benchChecks = "create||scale||replace||upgrade"

// benchCmd runs the timing checks --runs times per profile on one cluster,
// alternating profiles so a slow minute of the machine hits both, then
// prints each metric's median per profile and how the first profile compares.
func benchCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	reportDir := fs.String("report-dir", "_report/bench", "one folder per profile and run; bench.md and the table go here")
	runs := fs.Int("runs", 3, "runs per profile")
	from := fs.Bool("from-reports", false, "do not run: summarize the runs already in --report-dir")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: etcdproof bench [flags] PROFILE...   (default: reference coreos-v0.9.4; the first is the baseline)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return runner.ExitCouldNot
	}
	names := fs.Args()
	if len(names) == 0 {
		names = []string{"reference", "coreos-v0.9.4"}
	}
	paths, err := f.resolveProfiles(names)
	if err == nil && *runs < 1 {
		err = fmt.Errorf("--runs must be at least 1, got %d", *runs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof bench: %v\n", err)
		return runner.ExitCouldNot
	}
	if !*from {
		if code := runBench(ctx, &f, names, paths, *runs, *reportDir); code != runner.ExitPass {
			return code
		}
	}
	all := map[string][]*report.Report{}
	count := map[string]int{}
	for _, n := range names {
		reps, err := loadReports([]string{filepath.Join(*reportDir, n)})
		if err != nil {
			fmt.Fprintf(os.Stderr, "etcdproof bench: %s: %v\n", n, err)
			return runner.ExitCouldNot
		}
		all[n], count[n] = reps, len(reps)
	}
	md := bench.Markdown(names, count, bench.Summarize(names, all))
	if err := os.WriteFile(filepath.Join(*reportDir, "bench.md"), []byte(md), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof bench: %v\n", err)
		return runner.ExitCouldNot
	}
	fmt.Printf("\n%s\n(%s)\n", md, filepath.Join(*reportDir, "bench.md"))
	return runner.ExitPass
}

// runBench runs every profile once per round. A run whose checks fail or
// are incomplete (a capability the profile does not claim) still measured
// what it could; a run that could not set up the operator, or wrote no
// report, stops the benchmark.
func runBench(ctx context.Context, f *runFlags, names, paths []string, runs int, reportDir string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof bench: %v\n", err)
		return runner.ExitCouldNot
	}
	for i := 1; i <= runs; i++ {
		for j, n := range names {
			dir := filepath.Join(reportDir, n, fmt.Sprintf("run-%d", i))
			if err := os.RemoveAll(dir); err != nil {
				fmt.Fprintf(os.Stderr, "etcdproof bench: %v\n", err)
				return runner.ExitCouldNot
			}
			fmt.Printf("== bench round %d/%d: %s\n", i, runs, n)
			args := f.childRunArgs(paths[j], dir, benchChecks)
			if j == 0 {
				// The floor once a round, beside the baseline.
				args = append(args, "--floor")
			}
			cmd := exec.CommandContext(ctx, self, args...)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := benchRunUsable(ctx, exitCode(cmd.Run()), filepath.Join(dir, "report.json")); err != nil {
				fmt.Fprintf(os.Stderr, "etcdproof bench: %s could not run (%v); see %s\n", n, err, dir)
				return runner.ExitCouldNot
			}
		}
	}
	return runner.ExitPass
}

// benchRunUsable says why a child run measured nothing usable: it was
// interrupted, exited neither 0, 1 nor 2, left no report, or could not set
// up the operator. PASS, FAIL and INCOMPLETE runs all carry timings.
func benchRunUsable(ctx context.Context, code int, reportPath string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch code {
	case runner.ExitPass, runner.ExitFail, runner.ExitCouldNot:
	default:
		return fmt.Errorf("exit code %d", code)
	}
	rep, err := report.ReadJSON(reportPath)
	if err != nil {
		return fmt.Errorf("exit code %d, no report: %w", code, err)
	}
	if rep.SetupFailure != "" {
		return fmt.Errorf("setup failed: %s", rep.SetupFailure)
	}
	return nil
}

// resolveProfiles turns names or files into paths, reporting every bad one.
func (f *runFlags) resolveProfiles(names []string) ([]string, error) {
	var paths []string
	var errs []error
	for _, n := range names {
		g := *f
		g.profile = n
		if err := g.resolve(); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := profile.Load(g.o.ProfilePath); err != nil {
			errs = append(errs, err)
			continue
		}
		paths = append(paths, g.o.ProfilePath)
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.TrimSpace(errors.Join(errs...).Error()))
	}
	return paths, nil
}
