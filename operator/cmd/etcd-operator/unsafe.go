//go:build etcdproof_unsafe

package main

import "flag"

// bindUnsafeFlags binds the known-bad modes that the conformance suite's
// self-test runs the operator in, to prove that its checks notice them
// (manifests/selftest). Only the self-test's build has them: go build
// -tags etcdproof_unsafe (make selftest-image); see unsafe_off.go.
func bindUnsafeFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.unsafe.SkipDeadMemberRemoval, "unsafe-skip-dead-member-removal", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): replace a dead member's pod but leave the dead member in etcd's membership.")
	fs.BoolVar(&o.unsafe.UpgradeAllAtOnce, "unsafe-upgrade-all-at-once", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): restart every member at once on upgrade, with no health gate.")
	fs.BoolVar(&o.unsafe.LeaveNoSpace, "unsafe-leave-nospace", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): never compact, defragment or disarm under NOSPACE; the cluster refuses writes until someone steps in.")
	fs.BoolVar(&o.unsafe.ReplaceUnanswering, "unsafe-replace-unanswering", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): take a member that does not answer, though its pod runs, for dead at once and replace it (a member only cut off the network for a moment loses its place).")
	fs.BoolVar(&o.unsafe.RestartBeforeRejoin, "unsafe-restart-before-rejoin", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): on upgrade, restart the next member as soon as the last one's new pod exists, before it has rejoined (members on claims: quorum is lost for a few seconds each time).")
	fs.BoolVar(&o.unsafe.RebootstrapAfterQuorumLoss, "unsafe-rebootstrap-after-quorum-loss", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): once most member pods of a running cluster are gone, delete the rest with their claims and bootstrap a new, empty cluster.")
	fs.BoolVar(&o.unsafe.RestoreWithoutData, "unsafe-restore-without-data", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): carry out an EtcdRestore by starting the new cluster empty, never reading the backup.")
	fs.BoolVar(&o.unsafe.BootstrapBesideClaims, "unsafe-bootstrap-beside-claims", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): bootstrap a new, empty cluster although claims with its labels exist (an earlier cluster of that name's data), then delete those claims as claims of no member.")
	fs.BoolVar(&o.unsafe.RestoreUnchecked, "unsafe-restore-unchecked", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): carry out an EtcdRestore by deleting the cluster's members before checking that its backup restores.")
	fs.BoolVar(&o.unsafe.OmitCurrentVersion, "unsafe-omit-current-version", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): never write status.currentVersion.")
	fs.BoolVar(&o.unsafe.BudgetFromSize, "unsafe-budget-from-size", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): give clusters a PodDisruptionBudget of maxUnavailable 1, which Kubernetes counts against spec.size rather than against the voters etcd lists.")
	fs.BoolVar(&o.unsafe.Silent, "unsafe-silent", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): record no Events and set no metric about the clusters it looks after; /metrics is served, without them.")
	fs.BoolVar(&o.unsafeMembers.LeavePVCOnDelete, "unsafe-leave-pvc-on-delete", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): create one member claim of each cluster without an owner reference, so it is left behind when the cluster is deleted (clusters with spec.pod.persistentVolumeClaimSpec only).")
	fs.BoolVar(&o.unsafeMembers.ShellProbe, "unsafe-shell-probe", false,
		"UNSAFE, TEST ONLY (known-bad mode for the conformance self-test): give members the old readiness probe that execs /bin/sh, which etcd images without a shell (3.4.23+, 3.5.7+) never pass.")
}
