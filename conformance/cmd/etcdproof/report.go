package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/etcdproof/etcdproof/conformance/report"
	reporthtml "github.com/etcdproof/etcdproof/conformance/report/html"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

const reportUsage = `usage: etcdproof report html REPORT-DIR

  html   render REPORT-DIR/report.json and the histories beside it into
         REPORT-DIR/report.html again (every run writes it; this renders
         it anew, e.g. in a report dir copied from CI)
`

func reportCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "html" {
		fmt.Fprint(stderr, reportUsage)
		return runner.ExitCouldNot
	}
	fs := flag.NewFlagSet("report html", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reportUsage) }
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return runner.ExitCouldNot
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, reportUsage)
		return runner.ExitCouldNot
	}
	dir := fs.Arg(0)
	rep, err := report.ReadJSON(filepath.Join(dir, "report.json"))
	if err == nil {
		err = reporthtml.Write(dir, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "etcdproof report html: %v\n", err)
		return runner.ExitCouldNot
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, reporthtml.FileName))
	return 0
}
