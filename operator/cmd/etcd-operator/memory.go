package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the operator's GOGC when the environment sets none. Its live
// heap is about 6.5 MiB, nearly all of it made at start (the API types and
// their maps of every group controller-runtime links, the REST mapper, the
// S3 client's tables), and it allocates little, so the garbage that Go's
// default of 100 lets grow to the size of the live heap between collections
// was the largest part of its memory. Measured on kind, four scale steps of
// one cluster, peak anonymous RSS: 13.4 MiB at 50, 12.1 MiB at 25, for the
// same CPU (0.5-0.6 s); GOMEMLIMIT=10MiB on top took it to 10.3 MiB but
// tripled the CPU (1.6 s), collecting all the time near its limit.
const gcPercent = 25

// tuneGC applies gcPercent unless GOGC is set, which always wins.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
