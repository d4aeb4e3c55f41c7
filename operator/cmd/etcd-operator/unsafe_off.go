//go:build !etcdproof_unsafe

package main

import "flag"

// bindUnsafeFlags binds nothing in the released build: it has no known-bad
// mode, so an --unsafe-* flag (a self-test manifest applied by mistake, say)
// is refused as unknown and the operator does not start. The modes' code in
// plan and controller stays, unreachable: only these flags switch it on, and
// the package tests drive it directly.
func bindUnsafeFlags(*flag.FlagSet, *options) {}
