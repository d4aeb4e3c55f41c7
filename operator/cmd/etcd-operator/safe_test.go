//go:build !etcdproof_unsafe

package main

import (
	"strings"
	"testing"
)

// The released build (no etcdproof_unsafe tag) has no known-bad mode to
// switch on: each --unsafe-* flag is refused as unknown, so a copied
// self-test manifest cannot run a production operator unsafely.
func TestReleasedBuildRefusesUnsafeFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	for _, flag := range []string{"--unsafe-skip-dead-member-removal", "--unsafe-upgrade-all-at-once",
		"--unsafe-rebootstrap-after-quorum-loss", "--unsafe-restore-without-data", "--unsafe-bootstrap-beside-claims",
		"--unsafe-restore-unchecked", "--unsafe-omit-current-version", "--unsafe-budget-from-size", "--unsafe-silent",
		"--unsafe-leave-pvc-on-delete", "--unsafe-shell-probe"} {
		_, _, err := parseFlags([]string{"--namespace=a", flag})
		if err == nil || !strings.Contains(err.Error(), "flag provided but not defined") {
			t.Errorf("%s: error %v, want it refused as not defined", flag, err)
		}
	}
}
