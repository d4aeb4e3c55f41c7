package cluster

import (
	"strings"
	"testing"
)

// A release this host cannot make a cluster of is refused before anything
// is built: kind writes no kubeadm configuration older releases read, and
// kubelets before 1.19 do not start on a cgroup v2 host.
func TestPreflightRefusesWhatCannotRunHere(t *testing.T) {
	for _, tc := range []struct {
		release, hostCgroup string
		// want is a substring of the error; "" for none.
		want string
	}{
		{"v1.12.10", "1", "v1.13.0 is the oldest release this suite can make a cluster of"},
		{"v1.12.10", "2", "v1.13.0 is the oldest release"},
		{"v1.13.12", "1", ""},
		{"v1.16.15", "2", "Kubernetes v1.16.15 needs a cgroup v1 host: kubelets before 1.19 do not run on cgroup v2"},
		{"v1.18.20", "2", "needs a cgroup v1 host"},
		{"v1.16.15", "1", ""},
		// Docker did not say: kind says what goes wrong, if anything.
		{"v1.16.15", "", ""},
		{"v1.19.16", "2", ""},
		{"v1.34.4", "2", ""},
	} {
		err := preflight(Spec{KubernetesVersion: tc.release}, func() string { return tc.hostCgroup })
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s on cgroup %q: %v, want %q", tc.release, tc.hostCgroup, err, tc.want)
		}
	}
}

// The host is asked for its cgroup version only for releases it matters to.
func TestPreflightAsksDockerOnlyForOldKubelets(t *testing.T) {
	asked := false
	if err := preflight(Spec{NodeImage: "kindest/node:v1.34.11"}, func() string { asked = true; return "2" }); err != nil || asked {
		t.Errorf("v1.34.11: %v, asked Docker: %v; want neither", err, asked)
	}
}
