package main

// The Makefile's runs, checked with `make -n`: each builds the images of the
// profiles it runs (scripts/build-run-images.sh, from `etcdproof profile
// images`) and no other, so that the reference's run does not wait on the
// third-party operators' builds; `make images` and `make thirdparty-images`
// still build everything.

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// makeDryRun is what `make -n ARGS...` would run from the repository root:
// the commands of the targets and of every make they call. The variables a
// caller may have set are left out, so each target's defaults are read.
func makeDryRun(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	cmd := exec.Command("make", append([]string{"-n", "--no-print-directory"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PROFILE", "RESULTS_PROFILES", "IMAGES_FOR"}, name)
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRunsBuildTheImagesOfTheProfilesTheyRun(t *testing.T) {
	const buildFor = "scripts/build-run-images.sh"
	buildAll := []string{"scripts/build-workload-images.sh", "scripts/build-thirdparty-images.sh"}
	for _, tc := range []struct {
		args []string
		// images is what the run's image step is given: the profiles it runs.
		images string
	}{
		{[]string{"e2e"}, buildFor + " reference"},
		{[]string{"e2e-substrate"}, buildFor + " reference"},
		{[]string{"e2e", "PROFILE=coreos-v0.9.4"}, buildFor + " coreos-v0.9.4"},
		{[]string{"e2e-nodes"}, buildFor + " reference"},
		{[]string{"results"}, buildFor + " reference coreos-v0.9.4 reference-as-coreos"},
		{[]string{"results-nodes"}, buildFor + " reference coreos-v0.9.4 reference-as-coreos"},
		{[]string{"bench"}, buildFor + " reference coreos-v0.9.4 reference-as-coreos"},
		{[]string{"results", "RESULTS_PROFILES=reference"}, buildFor + " reference"},
		{[]string{"e2e-selftest"}, buildFor + " --selftest"},
		{[]string{"e2e-nodes-selftest"}, buildFor + " --selftest"},
	} {
		out := makeDryRun(t, tc.args...)
		if !strings.Contains(out, tc.images+"\n") {
			t.Errorf("make %s does not run %q; its image steps:\n%s", strings.Join(tc.args, " "), tc.images, imageSteps(out))
		}
		for _, script := range buildAll {
			if strings.Contains(out, script) {
				t.Errorf("make %s runs %s, which builds every image, not only those of the profiles it runs", strings.Join(tc.args, " "), script)
			}
		}
	}
}

// imageSteps are the lines of a dry run that run an image script
// (scripts/build-*-images.sh).
func imageSteps(dryRun string) string {
	var steps []string
	for _, l := range strings.Split(dryRun, "\n") {
		if strings.Contains(l, "scripts/build-") && strings.Contains(l, "-images.sh") {
			steps = append(steps, "  "+l)
		}
	}
	return strings.Join(steps, "\n")
}

func TestImagesAndThirdPartyImagesStillBuildEverything(t *testing.T) {
	for target, want := range map[string][]string{
		"images":            {"scripts/build-workload-images.sh", "scripts/build-thirdparty-images.sh"},
		"thirdparty-images": {"scripts/build-thirdparty-images.sh"},
	} {
		out := makeDryRun(t, target)
		for _, script := range want {
			if !strings.Contains(out, script) {
				t.Errorf("make %s does not run %s; its image steps:\n%s", target, script, imageSteps(out))
			}
		}
	}
}
