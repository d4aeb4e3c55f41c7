package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// Environment variables of coreos etcd-operator's Deployment (downward API),
// read after this operator's own.
const (
	envCoreosNamespace = "MY_POD_NAMESPACE"
	envCoreosPodName   = "MY_POD_NAME"
)

// coreosFlags are the flags of coreos etcd-operator v0.9.4's binary that this
// operator has no use for, with their types and defaults: those of its
// cmd/operator/main.go and those of glog, which it links. They are accepted so
// its Deployment runs this operator unchanged. --cluster-wide and --create-crd
// are this operator's own flags; --listen-addr sets the metrics address.
type coreosFlags struct {
	listenAddr   string
	chaosLevel   int
	printVersion bool
	gcInterval   time.Duration

	// glog's.
	logToStderr, alsoLogToStderr                     bool
	verbosity                                        int
	stderrThreshold, vmodule, logBacktraceAt, logDir string
}

// noEffect names the accepted flags that change nothing here.
var noEffect = []string{"chaos-level", "gc-interval",
	"logtostderr", "alsologtostderr", "v", "stderrthreshold", "vmodule", "log_backtrace_at", "log_dir"}

func (c *coreosFlags) bind(fs *flag.FlagSet) {
	const ignored = " Accepted for coreos etcd-operator v0.9.4's command line; no effect here."
	fs.StringVar(&c.listenAddr, "listen-addr", "0.0.0.0:8080",
		"coreos etcd-operator's HTTP address (/metrics, /readyz): when given, sets --metrics-bind-address, whose listener serves /readyz too (not given, /metrics stays on loopback).")
	fs.IntVar(&c.chaosLevel, "chaos-level", -1, "coreos etcd-operator's failure injection into its clusters."+ignored)
	fs.BoolVar(&c.printVersion, "version", false, "Print the version and quit.")
	fs.DurationVar(&c.gcInterval, "gc-interval", 10*time.Minute,
		"coreos etcd-operator's interval for collecting what deleted clusters left; owner references let Kubernetes do it here."+ignored)
	c.bindGlog(fs, ignored)
}

// bindGlog binds the flags glog registers in every coreos v0.9.4 binary.
func (c *coreosFlags) bindGlog(fs *flag.FlagSet, ignored string) {
	fs.BoolVar(&c.logToStderr, "logtostderr", false, "glog: log to standard error instead of files (this operator always does)."+ignored)
	fs.BoolVar(&c.alsoLogToStderr, "alsologtostderr", false, "glog: log to standard error as well as files."+ignored)
	fs.IntVar(&c.verbosity, "v", 0, "glog: log level for V logs (use --zap-log-level)."+ignored)
	fs.StringVar(&c.stderrThreshold, "stderrthreshold", "ERROR", "glog: logs at or above this threshold go to stderr."+ignored)
	fs.StringVar(&c.vmodule, "vmodule", "", "glog: comma-separated list of pattern=N settings for file-filtered logging."+ignored)
	fs.StringVar(&c.logBacktraceAt, "log_backtrace_at", "", "glog: when logging hits line file:N, emit a stack trace."+ignored)
	fs.StringVar(&c.logDir, "log_dir", "", "glog: if non-empty, write log files in this directory."+ignored)
}

// givenWithoutEffect lists the no-effect flags set on the command line, as name=value.
func givenWithoutEffect(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(noEffect, f.Name) {
			out = append(out, f.Name+"="+f.Value.String())
		}
	})
	return out
}

// firstEnv returns the first of the variables that is set.
func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// printVersion prints what coreos etcd-operator's --version printed.
func printVersion() {
	revision := "(unknown)"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	fmt.Println("etcd-operator Version:", buildVersion())
	fmt.Println("Git SHA:", revision)
	fmt.Println("Go Version:", runtime.Version())
	fmt.Printf("Go OS/Arch: %s/%s\n", runtime.GOOS, runtime.GOARCH)
}
