package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	valerrors "github.com/operator-framework/api/pkg/validation/errors"
)

// repoRoot is the module root, seen from this package.
const repoRoot = "../../.."

// releases are the bundles committed under manifests/olm/bundle: keep them
// as the Makefile's bundle target generates them.
var releases = []struct{ version, image, replaces string }{
	{"0.1.0", "etcdproof/etcd-operator:dev", ""},
	{"0.2.0", "etcdproof/etcd-operator:next", "0.1.0"},
}

// generateAll writes every release's bundle to <dir>/bundle/<version> and
// their catalog to <dir>/catalog, from the repository's manifests.
func generateAll(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range releases {
		b, err := parseBundleSpec(etcdOperator, r.version, r.image, r.replaces)
		if err != nil {
			t.Fatal(err)
		}
		err = generate(etcdOperator, filepath.Join(repoRoot, "manifests/base"), filepath.Join(repoRoot, "manifests/samples"), b,
			filepath.Join(dir, "bundle", r.version))
		if err != nil {
			t.Fatalf("generating %s: %v", r.version, err)
		}
	}
	if err := writeCatalog(etcdOperator, filepath.Join(dir, "bundle"), filepath.Join(dir, "catalog")); err != nil {
		t.Fatalf("generating the catalog: %v", err)
	}
	return dir
}

func loadBundle(t *testing.T, dir string) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatalf("loading bundle %s: %v", dir, err)
	}
	return b
}

// bundleValidators are operator-sdk's `bundle validate` defaults (CSV, CRD,
// bundle) with the optional object and good-practice suites.
var bundleValidators = validation.DefaultBundleValidators.WithValidators(
	validation.ObjectValidator,
	validation.GoodPracticesValidator,
)

// expectedWarnings are the validators' warnings this bundle accepts, each
// for a reason; any other warning fails the test, so a regression the
// validators only warn about (a lost minKubeVersion) is caught too.
var expectedWarnings = []string{
	// Only EtcdCluster has a sample (manifests/samples); a backup or restore
	// example needs a bucket or claim the user has to name anyway.
	`provided API should have an example annotation`,
}

// validate runs bundleValidators on b and returns its errors and the
// warnings not expected.
func validate(b *manifests.Bundle) (errs, warns []valerrors.Error) {
	for _, r := range bundleValidators.Validate(b.ObjectsToValidate()...) {
		errs = append(errs, r.Errors...)
		for _, w := range r.Warnings {
			if !slices.ContainsFunc(expectedWarnings, func(s string) bool { return w.Detail == s }) {
				warns = append(warns, w)
			}
		}
	}
	return errs, warns
}

// files lists the regular files below dir, relative to it; none if dir
// does not exist.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expectValid fails t for every error and warning OLM's validators report
// on the bundle of version.
func expectValid(t *testing.T, version string, b *manifests.Bundle) {
	t.Helper()
	errs, warns := validate(b)
	for _, e := range errs {
		t.Errorf("%s: %v", version, e)
	}
	for _, w := range warns {
		t.Errorf("%s: unexpected warning: %v", version, w)
	}
}
