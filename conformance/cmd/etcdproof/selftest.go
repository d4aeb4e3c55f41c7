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
// the check it must fail, and proves it failed (or, for inputs the suite
// must not judge, was INCOMPLETE) for the stated reason. Ginkgo runs one
// suite per process, so each profile gets its own process.
func selftestCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	var reportDir, filter string
	fs.StringVar(&reportDir, "report-dir", "_report/selftest", "one sub-folder per profile")
	fs.StringVar(&filter, "label-filter", "", "run only the profiles whose selftest check this Ginkgo label filter selects\n(node-loss and drain need a cluster with a worker per member)")
	if err := fs.Parse(args); err != nil {
		return runner.ExitCouldNot
	}
	if err := runner.ValidateLabelFilter(filter); err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", err)
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
		if !runner.Selected(filter, p.Selftest.Check) {
			fmt.Printf("== selftest %s: skipped (--label-filter %q leaves out %s)\n", p.Name, filter, p.Selftest.Check)
			continue
		}
		dir := filepath.Join(reportDir, p.Name)
		want := selftestState(p.Selftest)
		fmt.Printf("== selftest %s: %s must end %s with %q\n", p.Name, p.Selftest.Check, want.Label(), p.Selftest.Reason)
		// A report left by an earlier selftest must not be judged as this one's.
		if err := os.RemoveAll(dir); err != nil {
			failures = append(failures, err)
			continue
		}
		child := f
		if p.Selftest.AuditLog == profile.AuditLogUnreadable {
			// Under the report folder, in a folder nothing creates.
			child.o.Framework.AuditLog = filepath.Join(dir, "no-such-dir", "audit.log")
		}
		cmd := exec.CommandContext(ctx, self, child.childRunArgs(path, dir, p.Selftest.Check)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		runErr := cmd.Run()
		if err := judgeSelftest(p, filepath.Join(dir, "report.json"), exitCode(runErr)); err != nil {
			failures = append(failures, err)
			fmt.Printf("== selftest %s: NOT PROVEN: %v\n", p.Name, err)
		} else {
			fmt.Printf("== selftest %s: proven (%s %s for the intended reason)\n", p.Name, p.Selftest.Check, want.Label())
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", errors.Join(failures...))
		return runner.ExitFail
	}
	return runner.ExitPass
}

// selftestState is the check state a selftest profile expects.
func selftestState(x *profile.Expectation) report.State {
	if x.WantState() == profile.ExpectIncomplete {
		return report.Incomplete
	}
	return report.Failed
}

// exitCode is a child process's exit code; -1 when it did not exit (not
// started, killed by a signal).
func exitCode(runErr error) int {
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		return 0
	case errors.As(runErr, &exit):
		return exit.ExitCode()
	}
	return -1
}

// judgeSelftest: the intended check must have ended in the expected state
// with the stated reason, and the run must have exited with that state's
// code: 1 for a failure; 2 for an incomplete check, with the operator
// installed (a setup failure proves nothing) and no other check failed.
func judgeSelftest(p *profile.Profile, reportPath string, code int) error {
	want := selftestState(p.Selftest)
	wantCode := runner.ExitFail
	if want == report.Incomplete {
		wantCode = runner.ExitCouldNot
	}
	if code != wantCode {
		return fmt.Errorf("%s: run exited with code %d, want %d (%s %s)", p.Name, code, wantCode, p.Selftest.Check, want)
	}
	rep, err := report.ReadJSON(reportPath)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if rep.SetupFailure != "" {
		return fmt.Errorf("%s: the operator was not set up (%s), which proves nothing", p.Name, rep.SetupFailure)
	}
	for _, c := range rep.Checks {
		if c.Name != p.Selftest.Check {
			continue
		}
		if c.State != want {
			return fmt.Errorf("%s: check %s is %s (%s), want %s", p.Name, c.Name, c.State.Label(), c.Reason(), want.Label())
		}
		if !strings.Contains(c.Reason(), p.Selftest.Reason) {
			return fmt.Errorf("%s: check %s is %s for another reason: %s", p.Name, c.Name, c.State.Label(), c.Reason())
		}
		return nil
	}
	return fmt.Errorf("%s: the report has no check %s", p.Name, p.Selftest.Check)
}
