package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

// profileImages runs `etcdproof profile images` on the repository's
// profiles and suite config.
func profileImages(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"images", "--profiles-dir", repoConformance + "/profiles", "--config", repoConformance + "/config/suite.yaml"}, args...)
	code = profileCmd(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestProfileImagesPrintsTheUnionOfTheRuns(t *testing.T) {
	code, out, stderr := profileImages(t, "--profile", "reference-as-coreos", "reference", "coreos-v0.9.4")
	if code != runner.ExitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		"etcdproof/etcd-operator:dev", "etcdproof/etcd-operator:next",
		"quay.io/coreos/etcd:v3.4.25", "quay.io/coreos/etcd:v3.5.36", "quay.io/coreos/etcd:v3.6.16", "quay.io/coreos/etcd:v3.7.3",
		"etcdproof/seaweedfs:4.53-7506e5f91cd6", "etcdproof/etcdproof:dev",
		"quay.io/coreos/etcd-operator:v0.9.4", "quay.io/coreos/etcd:v3.5.6", "busybox:1.28.0-glibc", "tutum/curl:latest",
	}
	if got := strings.Fields(out); !slices.Equal(got, want) {
		t.Errorf("images =\n  %q\nwant\n  %q", got, want)
	}
}

func TestProfileImagesOfTheSelftest(t *testing.T) {
	code, out, stderr := profileImages(t, "--selftest", "--traffic-image", "example.com/traffic:1")
	if code != runner.ExitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	paths, err := filepath.Glob(repoConformance + "/profiles/selftest-*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no selftest profiles: %v", err)
	}
	cfg, err := profile.LoadConfig(repoConformance + "/config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, path := range paths {
		p, err := profile.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range p.RunImages(cfg, "example.com/traffic:1") {
			if !slices.Contains(want, img) {
				want = append(want, img)
			}
		}
	}
	got := strings.Fields(out)
	if !slices.Equal(got, want) {
		t.Errorf("images =\n  %q\nwant\n  %q", got, want)
	}
	// The known-bad operators are the reference's; no coreos image is run.
	for _, img := range []string{"etcdproof/etcd-operator:selftest", "example.com/traffic:1"} {
		if !slices.Contains(got, img) {
			t.Errorf("images %q lack %s", got, img)
		}
	}
	for _, img := range []string{"quay.io/coreos/etcd-operator:v0.9.4", "tutum/curl:latest", "busybox:1.28.0-glibc", "quay.io/coreos/etcd:v3.5.6"} {
		if slices.Contains(got, img) {
			t.Errorf("images %q include %s, which no selftest run starts", got, img)
		}
	}
}

func TestProfileImagesRejectsBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "name at least one profile"},
		{[]string{"no-such-operator"}, `no profile "no-such-operator"`},
		{[]string{"--config", "missing.yaml", "reference"}, "missing.yaml"},
		{[]string{"--traffic-image", "", "reference"}, "--traffic-image must not be empty"},
	} {
		code, out, stderr := profileImages(t, tc.args...)
		if code != runner.ExitCouldNot || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and an error mentioning %q", tc.args, code, out, stderr, runner.ExitCouldNot, tc.want)
		}
	}
	var out, errOut bytes.Buffer
	if code := profileCmd([]string{"lint"}, &out, &errOut); code != runner.ExitCouldNot || !strings.Contains(errOut.String(), "usage: etcdproof profile images") {
		t.Errorf("unknown subcommand: exit %d, stderr %q", code, errOut.String())
	}
}
