package main

import "runtime/debug"

// version is set when linking (-ldflags "-X main.version=next"), so that two
// builds of one source tell apart: make image builds
// etcdproof/etcd-operator:next so, for the conformance suite's
// operator-upgrade check. Empty: the module version from the build info.
var version string

// buildVersion is the version --version prints and the operator logs at start.
func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return "(unknown)"
}
