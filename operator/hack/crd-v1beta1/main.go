// Command crd-v1beta1 derives the apiextensions.k8s.io/v1beta1 CRD (for clusters
// older than Kubernetes 1.16) from the generated v1 CRD: stdin → stdout.
// Old API servers know neither CEL rules, defaults nor list-type markers, so
// those are dropped; the plain OpenAPI checks (minimum, pattern, minLength) stay.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crd-v1beta1:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("reading the v1 CRD: %w", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		return fmt.Errorf("parsing the v1 CRD: %w", err)
	}
	if len(crd.Spec.Versions) != 1 {
		return fmt.Errorf("expected exactly one version in %s, found %d", crd.Name, len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	schema, err := legacySchema(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return err
	}
	spec := map[string]any{
		"group":                 crd.Spec.Group,
		"names":                 crd.Spec.Names,
		"scope":                 crd.Spec.Scope,
		"version":               v.Name,
		"versions":              []map[string]any{{"name": v.Name, "served": true, "storage": true}},
		"preserveUnknownFields": false,
		"validation":            map[string]any{"openAPIV3Schema": schema},
	}
	if v.Subresources != nil {
		spec["subresources"] = v.Subresources
	}
	var columns []map[string]any
	for _, c := range v.AdditionalPrinterColumns {
		col := map[string]any{"name": c.Name, "type": c.Type, "JSONPath": c.JSONPath}
		if c.Description != "" {
			col["description"] = c.Description
		}
		columns = append(columns, col)
	}
	if len(columns) > 0 {
		spec["additionalPrinterColumns"] = columns
	}
	doc := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1beta1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crd.Name, "annotations": crd.Annotations},
		"spec":       spec,
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("writing the v1beta1 CRD: %w", err)
	}
	_, err = fmt.Fprintf(out, "# Generated from the v1 CRD by operator/hack/crd-v1beta1 (make manifests); do not edit.\n---\n%s", body)
	return err
}

// legacySchema returns the schema as plain JSON values without the fields
// that API servers before 1.16 reject or do not understand.
func legacySchema(s *apiextensionsv1.JSONSchemaProps) (any, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	var tree any
	if err := json.Unmarshal(body, &tree); err != nil {
		return nil, fmt.Errorf("decoding the schema: %w", err)
	}
	strip(tree)
	return tree, nil
}

var unsupportedBefore116 = []string{
	"x-kubernetes-validations", "default", "x-kubernetes-list-type",
	"x-kubernetes-list-map-keys", "x-kubernetes-map-type",
}

func strip(node any) {
	switch n := node.(type) {
	case map[string]any:
		for _, key := range unsupportedBefore116 {
			delete(n, key)
		}
		for _, child := range n {
			strip(child)
		}
	case []any:
		for _, child := range n {
			strip(child)
		}
	}
}
