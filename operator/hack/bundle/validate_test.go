package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	valerrors "github.com/operator-framework/api/pkg/validation/errors"
	"sigs.k8s.io/yaml"
)

func TestBundlesPassOLMValidation(t *testing.T) {
	dir := generateAll(t)
	for _, r := range releases {
		expectValid(t, r.version, loadBundle(t, filepath.Join(dir, "bundle", r.version)))
	}
}

// A CSV that lost an owned CRD must fail both the validator and this
// package's own check; proves the tests above can fail.
func TestValidationCatchesACSVMissingAnOwnedCRD(t *testing.T) {
	dir := filepath.Join(generateAll(t), "bundle", releases[0].version)
	path := filepath.Join(dir, manifestsDir, etcdOperator.csvFile())
	b := loadBundle(t, dir)
	csv := b.CSV.DeepCopy()
	csv.Spec.CustomResourceDefinitions.Owned = csv.Spec.CustomResourceDefinitions.Owned[1:]
	body, err := csvYAML(csv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	errs, _ := validate(loadBundle(t, dir))
	if !slices.ContainsFunc(errs, func(e valerrors.Error) bool { return strings.Contains(e.Detail, "not defined in CSV") }) {
		t.Errorf("the validator accepted a CSV that does not own every CRD of its bundle: %v", errs)
	}
	if missing := unownedCRDs(t, csv); len(missing) != 1 {
		t.Errorf("unownedCRDs = %v, want the one CRD removed", missing)
	}
}

// unownedCRDs are the served versions of manifests/crd that csv does not own.
func unownedCRDs(t *testing.T, csv *v1alpha1.ClusterServiceVersion) []string {
	t.Helper()
	res, err := kustomizeBuild(filepath.Join(repoRoot, "manifests/crd"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, r := range res {
		var c crdFile
		raw, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, &c.crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range c.crd.Spec.Versions {
			owned := slices.ContainsFunc(csv.Spec.CustomResourceDefinitions.Owned, func(o v1alpha1.CRDDescription) bool {
				return o.Name == c.crd.Name && o.Version == v.Name && o.Kind == c.crd.Spec.Names.Kind
			})
			if v.Served && !owned {
				missing = append(missing, c.crd.Name+"/"+v.Name)
			}
		}
	}
	return missing
}

func TestCSVOwnsEveryCRDOfTheInstall(t *testing.T) {
	dir := generateAll(t)
	for _, r := range releases {
		b := loadBundle(t, filepath.Join(dir, "bundle", r.version))
		if missing := unownedCRDs(t, b.CSV); len(missing) > 0 {
			t.Errorf("%s: the CSV does not own %v", r.version, missing)
		}
		for _, o := range b.CSV.Spec.CustomResourceDefinitions.Owned {
			if o.DisplayName == "" || o.Description == "" {
				t.Errorf("%s: owned %s has no displayName or description", r.version, o.Name)
			}
		}
	}
}

// The bundle ships the CRDs of manifests/crd unchanged.
func TestBundleCRDsAreTheInstallsCRDs(t *testing.T) {
	dir := generateAll(t)
	crds, err := filepath.Glob(filepath.Join(repoRoot, "manifests/crd/*_*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRD in manifests/crd: %v", err)
	}
	for _, r := range releases {
		for _, src := range crds {
			want, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "bundle", r.version, manifestsDir, filepath.Base(src)))
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := yaml.Unmarshal(want, &a); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(got, &b); err != nil {
				t.Fatal(err)
			}
			// Compared as data: kustomize may quote or order differently.
			wantNorm, _ := yaml.Marshal(a)
			gotNorm, _ := yaml.Marshal(b)
			if !bytes.Equal(wantNorm, gotNorm) {
				t.Errorf("%s: %s differs from %s", r.version, filepath.Base(src), src)
			}
		}
	}
}
