package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"sigs.k8s.io/yaml"
)

func TestDerivesALegacyCRDFromTheGeneratedOne(t *testing.T) {
	in, err := os.Open("../../../manifests/crd/etcd.database.coreos.com_etcdclusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	var out bytes.Buffer
	if err := run(in, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, gone := range []string{"x-kubernetes-validations", "x-kubernetes-list-type", "default:"} {
		if strings.Contains(text, gone) {
			t.Errorf("legacy CRD still has %q", gone)
		}
	}
	var crd apiextensionsv1beta1.CustomResourceDefinition
	body := text[strings.Index(text, "apiVersion:"):]
	if err := yaml.UnmarshalStrict([]byte(body), &crd); err != nil {
		t.Fatalf("not a valid v1beta1 CRD: %v", err)
	}
	spec := crd.Spec
	if crd.APIVersion != "apiextensions.k8s.io/v1beta1" || spec.Version != "v1beta2" || spec.Subresources == nil || spec.Subresources.Status == nil {
		t.Fatalf("unexpected legacy CRD: %+v", spec)
	}
	if len(spec.AdditionalPrinterColumns) < 4 {
		t.Errorf("printer columns lost: %+v", spec.AdditionalPrinterColumns)
	}
	size := spec.Validation.OpenAPIV3Schema.Properties["spec"].Properties["size"]
	if size.Minimum == nil || *size.Minimum != 1 {
		t.Errorf("spec.size lost its minimum: %+v", size)
	}
	version := spec.Validation.OpenAPIV3Schema.Properties["spec"].Properties["version"]
	if version.Pattern == "" {
		t.Errorf("spec.version lost its pattern")
	}
}

func TestRefusesInput(t *testing.T) {
	if err := run(strings.NewReader("kind: Nope\nfoo: [\n"), &bytes.Buffer{}); err == nil {
		t.Fatal("accepted a non-CRD")
	}
}
