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
	sameFiles(t, filepath.Join(fresh, "bundle"), "manifests/olm/bundle")
	// The catalog folder holds one folder per package: the example's too.
	sameFiles(t, filepath.Join(fresh, "catalog", etcdOperator.name), filepath.Join("manifests/olm/catalog", etcdOperator.name))
}

// sameFiles fails t unless the committed folder (relative to the repository)
// holds the files below fresh, byte for byte, and no other.
func sameFiles(t *testing.T, fresh, committed string) {
	t.Helper()
	want := files(t, fresh)
	got := files(t, filepath.Join(repoRoot, committed))
	for _, f := range got {
		if !slices.Contains(want, f) {
			t.Errorf("%s/%s is not generated any more (stale, or a release missing from the test's table)", committed, f)
		}
	}
	for _, f := range want {
		if !slices.Contains(got, f) {
			t.Errorf("%s/%s is missing: run `make bundle`", committed, f)
			continue
		}
		a, err := os.ReadFile(filepath.Join(fresh, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, committed, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s/%s differs from what the generator writes now: run `make bundle`", committed, f)
		}
	}
}
