package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/runner"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

func validateCmd(args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var opts validate.Options
	var file string
	fs.StringVar(&file, "history", "", "history file (JSON lines) written by a run (required)")
	fs.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "linearizability check limit; running out is a failure")
	fs.DurationVar(&opts.MaxWriteGap, "max-write-gap", 0, "longest allowed time without a successful write (0: no limit)")
	fs.BoolVar(&opts.AllowClientErrors, "allow-client-errors", false, "list failed requests without failing (histories of phases that kill members, like replace)")
	fs.StringVar(&opts.VisualizationPath, "visualization", "", "write porcupine's HTML here if the history is not linearizable")
	if err := fs.Parse(args); err != nil {
		return runner.ExitCouldNot
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
	if !res.Passed() {
		return runner.ExitFail
	}
	return runner.ExitPass
}
