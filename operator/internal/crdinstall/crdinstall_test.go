package crdinstall

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEmbeddedCopiesAreCurrent catches a CRD change without `make manifests`.
func TestEmbeddedCopiesAreCurrent(t *testing.T) {
	for _, resource := range Resources {
		for _, tt := range []struct {
			file     string
			embedded []byte
		}{
			{filepath.Join("crd", "etcd.database.coreos.com_"+resource+".yaml"), raw("v1", resource)},
			{filepath.Join("crd-v1beta1", "etcd.database.coreos.com_"+resource+".yaml"), raw("v1beta1", resource)},
		} {
			want, err := os.ReadFile(filepath.Join("..", "..", "..", "manifests", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, tt.embedded) {
				t.Errorf("the embedded copy of manifests/%s is stale: run `make manifests`", tt.file)
			}
		}
	}
}

func TestDecodeDropsTheStatusSubresourceOnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  []byte
		// subresources is where the CRD lists its subresources.
		subresources []string
	}{
		{"v1", raw("v1", "etcdclusters"), []string{"spec", "versions", "0", "subresources"}},
		{"v1beta1", raw("v1beta1", "etcdclusters"), []string{"spec", "subresources"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, without := range []bool{false, true} {
				crd, err := Decode(tt.raw, Options{WithoutStatusSubresource: without})
				if err != nil {
					t.Fatal(err)
				}
				if crd.GetName() != "etcdclusters.etcd.database.coreos.com" || crd.GetKind() != "CustomResourceDefinition" {
					t.Fatalf("decoded %s %s", crd.GetKind(), crd.GetName())
				}
				status := append(slices.Clone(tt.subresources), "status")
				if has := hasPath(crd, status); has == without {
					t.Errorf("without=%v: %v present=%v", without, status, has)
				}
				if scale := append(slices.Clone(tt.subresources), "scale"); !hasPath(crd, scale) {
					t.Errorf("without=%v: %v dropped", without, scale)
				}
			}
		})
	}
}

// hasPath follows path through maps and (by index "0") lists.
func hasPath(u *unstructured.Unstructured, path []string) bool {
	var cur any = u.Object
	for _, p := range path {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[p]
			if !ok {
				return false
			}
			cur = next
		case []any:
			if p != "0" || len(v) == 0 {
				return false
			}
			cur = v[0]
		default:
			return false
		}
	}
	return true
}
