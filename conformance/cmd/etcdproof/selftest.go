package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

// selftestCmd runs `etcdproof run` once per expectation of each known-bad
// profile, limited to the check it names, and proves that check failed (or,
// for inputs the suite must not judge, was INCOMPLETE) for the stated
// reason. Ginkgo runs one suite per process, so each run gets its own
// process, and its own report folder: <report-dir>/<profile>/<check>.
func selftestCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	var reportDir, filter string
	fs.StringVar(&reportDir, "report-dir", "_report/selftest", "one sub-folder per profile and check: <report-dir>/<profile>/<check>")
	fs.StringVar(&filter, "label-filter", "", "run only the expectations whose check this Ginkgo label filter selects\n(node-loss and drain need a cluster with a worker per member: left out on a smaller one unless named here)")
	dryRun := fs.Bool("dry-run", false, "load the profiles and list the runs without starting any (no cluster needed);\nexits 1 if a profile does not load or has no selftest section, as a real run would")
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
		if profiles, err = selftestProfiles(f.profilesDir); err != nil {
			fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", err)
			return runner.ExitCouldNot
		}
	}
	cfg, err := profile.LoadConfig(f.o.ConfigPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", err)
		return runner.ExitCouldNot
	}
	// Each run is limited to its check by name, so the runs themselves
	// leave nothing out for want of nodes: the plan does, as a run would.
	nodes := runner.UnknownNodes
	if !*dryRun {
		nodes = runner.CountNodes(ctx, f.o.Framework)
	}
	runs, failures := planSelftest(profiles, runner.Select(filter, nil, cfg.Sizes, nodes), reportDir, os.Stdout)
	if *dryRun {
		for _, r := range runs {
			fmt.Printf("== selftest %s: %s must end %s with %q; report in %s\n", r.profile, r.x.Check, selftestState(&r.x).Label(), r.x.Reason, r.dir)
		}
		fmt.Printf("== selftest: %d runs planned, none started (--dry-run)\n", len(runs))
		if len(failures) > 0 {
			fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", errors.Join(failures...))
			return runner.ExitFail
		}
		return runner.ExitPass
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", err)
		return runner.ExitCouldNot
	}
	for _, r := range runs {
		want := selftestState(&r.x)
		fmt.Printf("== selftest %s: %s must end %s with %q\n", r.profile, r.x.Check, want.Label(), r.x.Reason)
		// A report left by an earlier selftest must not be judged as this one's.
		if err := os.RemoveAll(r.dir); err != nil {
			failures = append(failures, err)
			continue
		}
		child := f
		if r.x.AuditLog == profile.AuditLogUnreadable {
			// Under the report folder, in a folder nothing creates.
			child.o.Framework.AuditLog = filepath.Join(r.dir, "no-such-dir", "audit.log")
		}
		cmd := exec.CommandContext(ctx, self, child.childRunArgs(r.path, r.dir, r.x.Check)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		runErr := cmd.Run()
		if err := judgeSelftest(r.label(), r.x, filepath.Join(r.dir, "report.json"), exitCode(runErr)); err != nil {
			failures = append(failures, err)
			fmt.Printf("== selftest %s: NOT PROVEN: %v\n", r.profile, err)
		} else {
			fmt.Printf("== selftest %s: proven (%s %s for the intended reason)\n", r.profile, r.x.Check, want.Label())
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "etcdproof selftest: %v\n", errors.Join(failures...))
		return runner.ExitFail
	}
	return runner.ExitPass
}

// selftestProfiles are the known-bad profiles selftest runs when given
// none: selftest-*.yaml in dir.
func selftestProfiles(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "selftest-*.yaml"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no selftest-*.yaml in %s", dir)
	}
	return paths, nil
}

// selftestRun is one run of the self-test: a known-bad profile limited to
// one check, which must end as x says.
type selftestRun struct {
	path    string // the profile file
	profile string // its name
	x       profile.Expectation
	dir     string // the run's report folder
}

// label names the run in errors: profile/check, as its report folder.
func (r selftestRun) label() string { return r.profile + "/" + r.x.Check }

// planSelftest loads each profile and lists a run per expectation whose
// check sel selects, with its report folder; it says on out which it
// leaves out and why. A profile that does not load or has no selftest
// section is a failure, and the others are still planned.
func planSelftest(paths []string, sel runner.Selection, reportDir string, out io.Writer) ([]selftestRun, []error) {
	var runs []selftestRun
	var failures []error
	for _, path := range paths {
		p, err := profile.Load(path)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		if len(p.Selftest) == 0 {
			failures = append(failures, fmt.Errorf("%s: no selftest section: which check must fail?", path))
			continue
		}
		for _, x := range p.Selftest {
			if !sel.Selected(x.Check) {
				fmt.Fprintf(out, "== selftest %s: %s skipped: %s\n", p.Name, x.Check, sel.Why(x.Check))
				continue
			}
			runs = append(runs, selftestRun{path: path, profile: p.Name, x: x, dir: filepath.Join(reportDir, p.Name, x.Check)})
		}
	}
	return runs, failures
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
// label names the run (profile/check) in the error.
func judgeSelftest(label string, x profile.Expectation, reportPath string, code int) error {
	want := selftestState(&x)
	wantCode := runner.ExitFail
	if want == report.Incomplete {
		wantCode = runner.ExitCouldNot
	}
	if code != wantCode {
		return fmt.Errorf("%s: run exited with code %d, want %d (%s %s)", label, code, wantCode, x.Check, want)
	}
	rep, err := report.ReadJSON(reportPath)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	if rep.SetupFailure != "" {
		return fmt.Errorf("%s: the operator was not set up (%s), which proves nothing", label, rep.SetupFailure)
	}
	for _, c := range rep.Checks {
		if c.Name != x.Check {
			continue
		}
		if c.State != want {
			return fmt.Errorf("%s: check %s is %s (%s), want %s", label, c.Name, c.State.Label(), c.Reason(), want.Label())
		}
		if !strings.Contains(c.Reason(), x.Reason) {
			return fmt.Errorf("%s: check %s is %s for another reason: %s", label, c.Name, c.State.Label(), c.Reason())
		}
		return nil
	}
	return fmt.Errorf("%s: the report has no check %s", label, x.Check)
}
