package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/runner"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// durationList is a flag of comma-separated durations.
type durationList []time.Duration

func (l *durationList) String() string {
	var parts []string
	for _, d := range *l {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ",")
}

func (l *durationList) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not a duration (for example 12.5s)", part)
		}
		*l = append(*l, d)
	}
	return nil
}

func validateCmd(args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var opts validate.Options
	var file string
	fs.StringVar(&file, "history", "", "history file (JSON lines) written by a run (required)")
	fs.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "linearizability check limit; running out is a failure")
	fs.DurationVar(&opts.MaxWriteGap, "max-write-gap", 0, "longest allowed time without a successful write (0: no limit)")
	var clientErrors string
	fs.StringVar(&clientErrors, "client-errors", string(validate.NoClientErrors), "what failed requests do to the verdict: none (any fails), after-retry (only those a client retrying definite failures once would still see), allowed (listed only: phases that kill members, like replace)")
	fs.DurationVar(&opts.ElectionTimeout, "election-timeout", validate.DefaultElectionTimeout, "the cluster's etcd --election-timeout: a leader change excuses a timed-out request (after-retry) only when the request was sent within this of the change")
	fs.IntVar(&opts.MaxLeaderChanges, "max-leader-changes", 1, "under after-retry, the most leader changes the history may have: the members the operator restarted, replaced or removed in it (-1: not judged)")
	fs.Var((*durationList)(&opts.UndrainedStopsAt), "undrained-stop-at", "under after-retry, when (since the history's start, comma-separated: 12.5s,40s) the phase stopped a member of a release that fails the requests in flight when it stops (etcd 3.4): a closed-connection failure in flight at one is excused, one per client and stop (the report's upgrade notes list them)")
	allow := fs.Bool("allow-client-errors", false, "same as --client-errors=allowed")
	fs.StringVar(&opts.VisualizationPath, "visualization", "", "write porcupine's HTML of the history here: always when it is not linearizable, up to 20000 operations when it is")
	if err := fs.Parse(args); err != nil {
		return runner.ExitCouldNot
	}
	var err error
	if opts.ClientErrors, err = validate.ParseClientErrors(clientErrors); err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof validate: --client-errors: %v\n", err)
		return runner.ExitCouldNot
	}
	if *allow {
		opts.ClientErrors = validate.AllowClientErrors
	}
	if file == "" {
		fmt.Fprintln(os.Stderr, "etcdproof validate: --history is required")
		return runner.ExitCouldNot
	}
	if opts.Timeout <= 0 {
		fmt.Fprintln(os.Stderr, "etcdproof validate: --timeout must be positive")
		return runner.ExitCouldNot
	}
	h, err := history.ReadFile(file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdproof validate: %v\n", err)
		return runner.ExitCouldNot
	}
	res := validate.Validate(h, opts)
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	switch {
	case res.Passed():
	case res.Incomplete:
		// Nothing failed, but some written keys could not be read back.
		return runner.ExitCouldNot
	default:
		return runner.ExitFail
	}
	return runner.ExitPass
}
