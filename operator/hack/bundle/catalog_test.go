package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// catalogDoc is any document of the catalog, with the fields of all three
// schemas.
type catalogDoc struct {
	Schema         string        `json:"schema"`
	Name           string        `json:"name"`
	Package        string        `json:"package"`
	DefaultChannel string        `json:"defaultChannel"`
	Entries        []fbcEntry    `json:"entries"`
	Properties     []fbcProperty `json:"properties"`
}

func readCatalog(t *testing.T, path string) []catalogDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []catalogDoc
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var d catalogDoc
		if err := dec.Decode(&d); err != nil {
			break
		}
		// opm refuses a catalog with a document that has no schema,
		// an empty one too ("invalid schema: must not be empty").
		if d.Schema == "" {
			t.Errorf("%s: document %d has no schema, which opm refuses: %+v", path, len(docs)+1, d)
		}
		docs = append(docs, d)
	}
	return docs
}

// The catalog holds the package, a stable channel along the replaces chain
// and every bundle inline, object for object as in the bundle directory.
func TestCatalogCarriesTheBundlesAndTheirUpgradeChain(t *testing.T) {
	dir := generateAll(t)
	docs := readCatalog(t, filepath.Join(dir, "catalog", etcdOperator.catalogFile()))
	bySchema := map[string][]catalogDoc{}
	for _, d := range docs {
		bySchema[d.Schema] = append(bySchema[d.Schema], d)
	}
	if p := bySchema["olm.package"]; len(p) != 1 || p[0].Name != etcdOperator.name || p[0].DefaultChannel != channel {
		t.Errorf("olm.package documents %+v, want one %s with default channel %s", p, etcdOperator.name, channel)
	}
	var wantEntries []fbcEntry
	for i, r := range releases {
		e := fbcEntry{Name: "etcd-operator.v" + r.version}
		if i > 0 {
			e.Replaces = "etcd-operator.v" + releases[i-1].version
		}
		wantEntries = append(wantEntries, e)
	}
	if c := bySchema["olm.channel"]; len(c) != 1 || c[0].Name != channel || !reflect.DeepEqual(c[0].Entries, wantEntries) {
		t.Errorf("olm.channel documents %+v, want %s with entries %+v", c, channel, wantEntries)
	}
	bundles := bySchema["olm.bundle"]
	if len(bundles) != len(releases) {
		t.Fatalf("%d olm.bundle documents, want %d", len(bundles), len(releases))
	}
	for i, r := range releases {
		fb := bundles[i]
		if fb.Name != "etcd-operator.v"+r.version || fb.Package != etcdOperator.name {
			t.Errorf("bundle %d is %s of %s, want etcd-operator.v%s of %s", i, fb.Name, fb.Package, r.version, etcdOperator.name)
		}
		var inline []map[string]any
		var version string
		for _, p := range fb.Properties {
			v, _ := p.Value.(map[string]any)
			switch p.Type {
			case "olm.package":
				version, _ = v["version"].(string)
			case "olm.bundle.object":
				data, _ := v["data"].(string)
				raw, err := base64.StdEncoding.DecodeString(data)
				if err != nil {
					t.Fatal(err)
				}
				var obj map[string]any
				if err := json.Unmarshal(raw, &obj); err != nil {
					t.Fatal(err)
				}
				inline = append(inline, obj)
			}
		}
		if version != r.version {
			t.Errorf("%s: olm.package version %q", fb.Name, version)
		}
		var want []map[string]any
		for _, o := range loadBundle(t, filepath.Join(dir, "bundle", r.version)).Objects {
			// Through JSON, as the inline objects went: numbers alike.
			raw, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatal(err)
			}
			want = append(want, obj)
		}
		if !reflect.DeepEqual(inline, want) {
			t.Errorf("%s: the catalog's objects differ from the bundle's (%d inline, %d in the bundle)", fb.Name, len(inline), len(want))
		}
	}
}
