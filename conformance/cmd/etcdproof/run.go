package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

// runFlags are shared by run and selftest.
type runFlags struct {
	o           runner.Options
	profile     string
	profilesDir string
	cluster     string
	kind        clusterFlags
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.o.Framework.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.o.Framework.Context, "context", "", "kubeconfig context (default: current)")
	fs.StringVar(&f.o.Framework.Kubectl, "kubectl", "kubectl", "kubectl binary, needed only by profile run steps that call it ({{.Kubectl}}); apply and delete steps use the API directly")
	fs.StringVar(&f.o.Framework.AuditLog, "audit-log", "", "API-server audit log readable from here; without a readable one the rbac check is INCOMPLETE")
	fs.BoolVar(&f.o.Framework.SkipCleanup, "skip-cleanup", false, "leave clusters, namespaces and the operator in place")
	fs.DurationVar(&f.o.Timeout, "timeout", 2*time.Hour, "limit for the whole run")
	f.registerProfile(fs)
}

// registerProfile registers the flags that say what a run runs, with no
// cluster: also those of `etcdproof profile images`.
func (f *runFlags) registerProfile(fs *flag.FlagSet) {
	fs.StringVar(&f.o.Framework.TrafficImage, "traffic-image", "etcdproof/etcdproof:dev", "image with this binary, present on the nodes, for in-cluster traffic")
	fs.StringVar(&f.profile, "profile", "", "operator profile: a file, or a name in --profiles-dir (required)")
	fs.StringVar(&f.profilesDir, "profiles-dir", "conformance/profiles", "where profile names are looked up")
	fs.StringVar(&f.o.ConfigPath, "config", "conformance/config/suite.yaml", "suite config (intervals, budgets, sizes, traffic)")
}

// resolve checks flags and turns a profile name into a path.
func (f *runFlags) resolve() error {
	path, err := profilePath(f.profile, f.profilesDir)
	f.o.ProfilePath = path
	errs := []error{err}
	if f.cluster == "" {
		f.cluster = string(runner.ClusterExisting)
	}
	mode, err := runner.ParseClusterMode(f.cluster)
	errs = append(errs, err)
	f.o.Cluster = mode
	if mode != runner.ClusterExisting && mode != "" {
		f.kind.resolve()
		f.o.ClusterSpec = f.kind.spec
		errs = append(errs, f.kind.spec.Validate())
		// The created cluster's audit log, read once it exists.
		f.o.Framework.AuditLog = f.kind.spec.AuditLog()
	}
	if !fileExists(f.o.ConfigPath) {
		errs = append(errs, fmt.Errorf("--config: %s does not exist", f.o.ConfigPath))
	}
	if f.o.Framework.TrafficImage == "" {
		errs = append(errs, errors.New("--traffic-image must not be empty"))
	}
	if f.o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout must be positive, got %s", f.o.Timeout))
	}
	// An unreadable --audit-log is not an error here: the rbac check then
	// reports INCOMPLETE with the path and the error, and the run exits 2.
	return errors.Join(errs...)
}

// profilePath turns --profile, a file or a name in dir, into the file's path.
func profilePath(name, dir string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("--profile is required (a file or a name such as reference)")
	case fileExists(name) || strings.Contains(name, "/") || strings.HasSuffix(name, ".yaml"):
		if !fileExists(name) {
			return name, fmt.Errorf("--profile: %s does not exist", name)
		}
		return name, nil
	}
	// A name, which may contain dots (coreos-v0.9.4).
	path := filepath.Join(dir, name+".yaml")
	if !fileExists(path) {
		return path, fmt.Errorf("--profile: no profile %q in %s (%s does not exist); profiles there: %s",
			name, dir, path, strings.Join(profileNames(dir), ", "))
	}
	return path, nil
}

// childRunArgs are the arguments of an `etcdproof run` child process with
// this command's cluster flags. Ginkgo runs one suite per process, so
// commands that need several runs start one process per run.
// The child's required checks are the default: those the filter selects.
func (f *runFlags) childRunArgs(profilePath, reportDir, labelFilter string) []string {
	args := []string{"run", "--profile", profilePath, "--report-dir", reportDir, "--label-filter", labelFilter,
		"--config", f.o.ConfigPath, "--kubectl", f.o.Framework.Kubectl, "--traffic-image", f.o.Framework.TrafficImage, "--timeout", f.o.Timeout.String()}
	for flagName, v := range map[string]string{"--kubeconfig": f.o.Framework.Kubeconfig, "--context": f.o.Framework.Context, "--audit-log": f.o.Framework.AuditLog} {
		if v != "" {
			args = append(args, flagName, v)
		}
	}
	return args
}

// profileNames lists the profiles a name can select in dir.
func profileNames(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// parseRun parses and validates `run` flags; split out for tests.
func parseRun(args []string, stderr io.Writer) (runner.Options, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	fs.StringVar(&f.o.Framework.ReportDir, "report-dir", "_report", "where report.json, report.md, junit.xml and artifacts go")
	// Only run makes clusters: selftest and bench start one run per
	// profile on the cluster they are given.
	fs.StringVar(&f.cluster, "cluster", string(runner.ClusterExisting), "existing: run on --kubeconfig/--context; create: create the kind cluster (or reuse it) with the flags below and load the profile's images into it;\n"+
		"create-and-destroy: create it and delete it after the run (needs Docker and a node image, not kind)")
	f.kind.register(fs, "cluster-name")
	fs.StringVar(&f.o.LabelFilter, "label-filter", "", "Ginkgo label filter over the checks: "+strings.Join(profile.CheckLabels, ", "))
	fs.BoolVar(&f.o.Floor, "floor", false, "also measure the floor: the reference's member pods created, scaled and replaced by the suite with no operator, into report.json's floor (etcdproof bench sets it for its first profile)")
	var requireErr error
	fs.Func("require", "comma-separated checks that must pass for exit 0 (default: the book's six checks and the fault checks the profile claims, those the --label-filter selects);\n"+
		"a required check that is not claimed by the profile, not selected, skipped or INCOMPLETE makes the run INCOMPLETE (exit 2)", func(v string) error {
		f.o.Require, requireErr = runner.ParseRequire(v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return runner.Options{}, err
	}
	if fs.NArg() > 0 {
		return runner.Options{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	errs := []error{f.resolve(), runner.ValidateLabelFilter(f.o.LabelFilter), requireErr}
	if f.o.Framework.ReportDir == "" {
		errs = append(errs, errors.New("--report-dir must not be empty"))
	}
	if err := errors.Join(errs...); err != nil {
		return runner.Options{}, err
	}
	abs, err := filepath.Abs(f.o.Framework.ReportDir)
	if err != nil {
		return runner.Options{}, err
	}
	f.o.Framework.ReportDir = abs
	if w := auditLogWarning(f.o); w != "" && f.o.Cluster == runner.ClusterExisting {
		fmt.Fprintf(stderr, "etcdproof run: warning: %s\n", w)
	}
	return f.o, nil
}

// auditLogWarning says up front when the rbac check will be INCOMPLETE for
// want of a readable audit log; the check itself records why.
func auditLogWarning(o runner.Options) string {
	if !runner.Selected(o.LabelFilter, "rbac") {
		return ""
	}
	if o.Framework.AuditLog == "" {
		return "no --audit-log: the rbac check will be INCOMPLETE"
	}
	fh, err := os.Open(o.Framework.AuditLog)
	if err != nil {
		return fmt.Sprintf("--audit-log: %v: the rbac check will be INCOMPLETE", err)
	}
	_ = fh.Close()
	return ""
}

func runCmd(ctx context.Context, args []string) int {
	o, err := parseRun(args, os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "etcdproof run: %v\n", err)
		}
		return runner.ExitCouldNot
	}
	return runner.Run(ctx, o)
}
