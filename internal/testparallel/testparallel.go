// Package testparallel lets a test package whose tests mostly wait (on etcd
// elections, a reconciler, an API server) run more of them at once than the
// machine has cores, without a -parallel flag on the go test command line:
// that flag reaches every package's test binary, and Ginkgo refuses it.
package testparallel

import (
	"flag"
	"strconv"
)

// Default sets the test binary's -test.parallel to n unless the command line
// set it. Call it from TestMain before m.Run.
func Default(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
