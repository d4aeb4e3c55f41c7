package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The committed bundles and catalog are what the generator writes today from
// manifests/: a change to the CRDs, the RBAC or the Deployment without
// `make bundle` fails here, as `make verify-generated` does for the rest.
func TestCommittedOLMManifestsAreFresh(t *testing.T) {
	fresh := generateAll(t)
	for _, sub := range []string{"bundle", "catalog"} {
		committed := filepath.Join(repoRoot, "manifests/olm", sub)
		want := files(t, filepath.Join(fresh, sub))
		got := files(t, committed)
		for _, f := range got {
			if !slices.Contains(want, f) {
				t.Errorf("manifests/olm/%s/%s is not generated any more (stale, or a release missing from the test's table)", sub, f)
			}
		}
		for _, f := range want {
			if !slices.Contains(got, f) {
				t.Errorf("manifests/olm/%s/%s is missing: run `make bundle`", sub, f)
				continue
			}
			a, err := os.ReadFile(filepath.Join(fresh, sub, f))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(committed, f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("manifests/olm/%s/%s differs from what the generator writes now: run `make bundle`", sub, f)
			}
		}
	}
}
