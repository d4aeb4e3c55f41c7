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

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

// selftestCmd runs `etcdproof run` once per known-bad profile, limited to
// the check it must fail, and proves it failed for the stated reason.
// Ginkgo runs one suite per process, so each profile gets its own process.
func selftestCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	var reportDir string
	fs.StringVar(&reportDir, "report-dir", "_report/selftest", "one sub-folder per profile")
	if err := fs.Parse(args); err != nil {
		return runner.ExitCouldNot
	}
	profiles := fs.Args()
	if len(profiles) == 0 {
		var err error
		profiles, err = filepath.Glob(filepath.Join(f.profilesDir, "selftest-*.yaml"))
		if err != nil || len(profiles) == 0 {
			fmt.Fprintf(os.Stderr, "etcdproof selftest: no selftest-*.yaml in %s\n", f.profilesDir)
			return runner.ExitCouldNot
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", err)
		return runner.ExitCouldNot
	}
	var failures []error
	for _, path := range profiles {
		p, err := profile.Load(path)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		if p.Selftest == nil {
			failures = append(failures, fmt.Errorf("%s: no selftest section: which check must fail?", path))
			continue
		}
		dir := filepath.Join(reportDir, p.Name)
		fmt.Printf("== selftest %s: %s must fail with %q\n", p.Name, p.Selftest.Check, p.Selftest.Reason)
		cmd := exec.CommandContext(ctx, self, f.childRunArgs(path, dir, p.Selftest.Check)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		runErr := cmd.Run()
		if err := judgeSelftest(p, filepath.Join(dir, "report.json"), runErr); err != nil {
			failures = append(failures, err)
			fmt.Printf("== selftest %s: NOT PROVEN: %v\n", p.Name, err)
		} else {
			fmt.Printf("== selftest %s: proven (%s failed for the intended reason)\n", p.Name, p.Selftest.Check)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", errors.Join(failures...))
		return runner.ExitFail
	}
	return runner.ExitPass
}

// judgeSelftest: the run must exit 1 (not 2: could-not-run proves nothing)
// and the intended check must have failed with the stated reason.
func judgeSelftest(p *profile.Profile, reportPath string, runErr error) error {
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) || exit.ExitCode() != runner.ExitFail {
		return fmt.Errorf("%s: run exited with %v, want exit code %d (a failed check)", p.Name, runErr, runner.ExitFail)
	}
	rep, err := report.ReadJSON(reportPath)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	for _, c := range rep.Checks {
		if c.Name != p.Selftest.Check {
			continue
		}
		if c.State != "failed" {
			return fmt.Errorf("%s: check %s is %s, want failed", p.Name, c.Name, c.State)
		}
		if !strings.Contains(c.Failure, p.Selftest.Reason) {
			return fmt.Errorf("%s: check %s failed for another reason: %s", p.Name, c.Name, c.Failure)
		}
		return nil
	}
	return fmt.Errorf("%s: the report has no check %s", p.Name, p.Selftest.Check)
}
