//go:build etcdproof_unsafe

package main

import "testing"

// The self-test's build (-tags etcdproof_unsafe) takes the known-bad flags.
func TestParseUnsafeFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	o, _, err := parseFlags([]string{"--namespace=a", "--unsafe-skip-dead-member-removal", "--unsafe-upgrade-all-at-once",
		"--unsafe-rebootstrap-after-quorum-loss", "--unsafe-restore-without-data", "--unsafe-bootstrap-beside-claims",
		"--unsafe-restore-unchecked", "--unsafe-omit-current-version", "--unsafe-budget-from-size", "--unsafe-silent",
		"--unsafe-leave-pvc-on-delete", "--unsafe-shell-probe"})
	if err != nil {
		t.Fatal(err)
	}
	u := o.unsafe
	if !u.SkipDeadMemberRemoval || !u.UpgradeAllAtOnce || !u.RebootstrapAfterQuorumLoss || !u.RestoreWithoutData ||
		!u.BootstrapBesideClaims || !u.RestoreUnchecked || !u.OmitCurrentVersion || !u.BudgetFromSize || !u.Silent {
		t.Errorf("unsafe flags not parsed: %+v", o.unsafe)
	}
	if !o.unsafeMembers.LeavePVCOnDelete || !o.unsafeMembers.ShellProbe {
		t.Errorf("unsafe member flags not parsed: %+v", o.unsafeMembers)
	}
}
