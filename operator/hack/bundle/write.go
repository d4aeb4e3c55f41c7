package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

// Bundle layout of the registry+v1 format.
const (
	manifestsDir    = "manifests"
	metadataDir     = "metadata"
	annotationsFile = "annotations.yaml"
)

// bundleAnnotations are metadata/annotations.yaml: what a bundle image's
// labels say, and what opm reads to place the bundle in a catalog: here, in
// package p.
func bundleAnnotations(p operatorPackage) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       manifestsDir + "/",
		"operators.operatorframework.io.bundle.metadata.v1":        metadataDir + "/",
		"operators.operatorframework.io.bundle.package.v1":         p.name,
		"operators.operatorframework.io.bundle.channels.v1":        channel,
		"operators.operatorframework.io.bundle.channel.default.v1": channel,
	}
}

// writeBundle writes the bundle of csv and in's CRDs, in package p, to dir,
// replacing the manifests/ and metadata/ a previous run left (a CRD dropped
// from the install must not linger in the bundle).
func writeBundle(p operatorPackage, dir string, csv *v1alpha1.ClusterServiceVersion, in install) error {
	for _, sub := range []string{manifestsDir, metadataDir} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	csvYAML, err := csvYAML(csv)
	if err != nil {
		return err
	}
	files := map[string][]byte{filepath.Join(manifestsDir, p.csvFile()): csvYAML}
	for _, c := range in.crds {
		// The file names of manifests/crd (controller-gen's <group>_<plural>).
		name := fmt.Sprintf("%s_%s.yaml", c.crd.Spec.Group, c.crd.Spec.Names.Plural)
		files[filepath.Join(manifestsDir, name)] = c.yaml
	}
	annotations, err := yaml.Marshal(map[string]any{"annotations": bundleAnnotations(p)})
	if err != nil {
		return err
	}
	files[filepath.Join(metadataDir, annotationsFile)] = annotations
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), append([]byte(p.header), body...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// csvYAML writes csv without what the Go types add but a CSV author would
// not write: null fields (creationTimestamp), an empty status, no API
// services and the default cleanup (off).
func csvYAML(csv *v1alpha1.ClusterServiceVersion) ([]byte, error) {
	raw, err := json.Marshal(csv)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	delete(obj, "status")
	if spec, ok := obj["spec"].(map[string]any); ok {
		if len(csv.Spec.APIServiceDefinitions.Owned)+len(csv.Spec.APIServiceDefinitions.Required) == 0 {
			delete(spec, "apiservicedefinitions")
		}
		if !csv.Spec.Cleanup.Enabled {
			delete(spec, "cleanup")
		}
	}
	return yaml.Marshal(dropNulls(obj))
}

// dropNulls removes null values at any depth. Empty objects stay: some mean
// something (emptyDir: {}).
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}
