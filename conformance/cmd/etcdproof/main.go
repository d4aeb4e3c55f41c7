// Command etcdproof certifies etcd operators on Kubernetes.
//
//	etcdproof run       run the conformance checks against a cluster
//	etcdproof traffic   in-cluster client load (used by the run)
//	etcdproof validate  re-check a saved history
//	etcdproof selftest  prove the suite fails known-bad operators
//	etcdproof results   render several runs side by side (docs/results.md, --html)
//	etcdproof report    render a report dir's report.html again
//	etcdproof bench     time the operators over repeated runs
//	etcdproof cluster   create, load images into and delete the kind cluster
//	etcdproof profile   images: what the runs of profiles put on the nodes
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/etcdproof/etcdproof/conformance/runner"
)

const usage = `usage: etcdproof <command> [flags]

commands:
  run        run the conformance checks against a cluster
  traffic    serve put/get client load against etcd (runs inside the cluster)
  validate   check a saved history for linearizability and lost writes
  selftest   run known-bad profiles and prove each fails the intended check
  results    render several runs' reports side by side (docs/results.md, --html)
  report     html REPORT-DIR: render the dir's report.html again
  bench      run the timing checks repeatedly per profile; medians and ratios
  cluster    up|down|load: the kind cluster the checks run on (needs Docker, not kind)
  profile    images PROFILE...: the images their runs need on the nodes, one a line (what make e2e builds)

"etcdproof <command> -h" lists a command's flags.
exit codes: 0 pass (every required check passed), 1 fail (a check failed),
2 incomplete or could not run (a check could not observe what it judges, a
required check did not run, bad flags, profile or cluster)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(runner.ExitCouldNot)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var code int
	switch os.Args[1] {
	case "run":
		code = runCmd(ctx, os.Args[2:])
	case "traffic":
		code = trafficCmd(ctx, os.Args[2:])
	case "validate":
		code = validateCmd(os.Args[2:])
	case "selftest":
		code = selftestCmd(ctx, os.Args[2:])
	case "results":
		code = resultsCmd(os.Args[2:], os.Stdout)
	case "report":
		code = reportCmd(os.Args[2:], os.Stdout, os.Stderr)
	case "bench":
		code = benchCmd(ctx, os.Args[2:])
	case "cluster":
		code = clusterCmd(ctx, os.Args[2:], os.Stderr)
	case "profile":
		code = profileCmd(os.Args[2:], os.Stdout, os.Stderr)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "etcdproof: unknown command %q\n\n%s", os.Args[1], usage)
		code = runner.ExitCouldNot
	}
	stop()
	os.Exit(code)
}
