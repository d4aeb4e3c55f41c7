package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
	"github.com/etcdproof/etcdproof/conformance/specs"
)

// checkLines prints one line to w as each check's spec ends: its state as
// the report will judge it, how long it took against its spec's timeout,
// and the first line of why it did not pass. Ginkgo's verbose output keeps
// the steps; this line is what a person scanning the terminal looks for.
// Checks the run does not select print nothing here (leftOut names those
// left out for want of nodes before the specs start); the floor, measured
// only when asked for, prints its line too.
type checkLines struct {
	w           io.Writer
	rec         *report.Recorder
	cfg         *profile.Config
	sel         Selection
	setupFailed func() bool
}

// leftOut prints a line for each check left out for want of nodes, as
// its report line reads: its name, not selected, and why.
func (l checkLines) leftOut() {
	for _, name := range l.sel.LeftOut() {
		v := checkVerdict{State: report.NotSelected, Skipped: l.sel.Why(name)}
		fmt.Fprintln(l.w, checkLine(name, v, 0, 0))
	}
}

// specEnded is a ReportAfterEach body.
func (l checkLines) specEnded(sr types.SpecReport) {
	if sr.LeafNodeType != types.NodeTypeIt {
		return
	}
	name := checkOf(sr)
	if slices.Contains(sr.Labels(), specs.FloorCheck) {
		name = specs.FloorCheck
	} else if name == "" || !l.sel.Selected(name) {
		return
	}
	v := checkState(l.rec.Check(name), sr, true, "", l.setupFailed())
	fmt.Fprintln(l.w, checkLine(name, v, sr.RunTime, l.cfg.SpecTimeout(name)))
}

// checkOf is the check a spec carries the label of ("" for none).
func checkOf(sr types.SpecReport) string {
	for _, l := range sr.Labels() {
		if slices.Contains(profile.CheckLabels, l) {
			return l
		}
	}
	return ""
}

// checkLine reads "etcdproof: scale            failed      93.1 s of 10m0s: <why>".
func checkLine(name string, v checkVerdict, took, timeout time.Duration) string {
	line := fmt.Sprintf("etcdproof: %-16s %-12s", name, v.State.Label())
	if took > 0 && v.State != report.NotClaimed && v.State != report.Skipped {
		line += fmt.Sprintf(" %6.1f s of %s", took.Seconds(), timeout)
	}
	why := v.Failure
	if why == "" {
		why = v.Incomplete + v.Skipped
	}
	line = strings.TrimRight(line, " ")
	if first, _, _ := strings.Cut(strings.TrimSpace(why), "\n"); first != "" {
		line += ": " + first
	}
	return line
}
