package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"sigs.k8s.io/yaml"
)

// FBC documents (operator-registry's declcfg schemas olm.package,
// olm.channel and olm.bundle), written here without opm.
type (
	fbcPackage struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
		Description    string `json:"description,omitempty"`
	}
	fbcChannel struct {
		Schema  string     `json:"schema"`
		Package string     `json:"package"`
		Name    string     `json:"name"`
		Entries []fbcEntry `json:"entries"`
	}
	fbcEntry struct {
		Name     string `json:"name"`
		Replaces string `json:"replaces,omitempty"`
	}
	fbcBundle struct {
		Schema        string            `json:"schema"`
		Name          string            `json:"name"`
		Package       string            `json:"package"`
		Properties    []fbcProperty     `json:"properties"`
		RelatedImages []fbcRelatedImage `json:"relatedImages,omitempty"`
	}
	fbcProperty struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	fbcRelatedImage struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
)

// writeCatalog writes the catalog of package p, every bundle under
// bundlesDir, to catalogDir. Each bundle is carried inline (its objects as olm.bundle.object
// properties) with no bundle image: OLM installs such a bundle from what the
// catalog serves, so no bundle image has to be built or pushed.
func writeCatalog(p operatorPackage, bundlesDir, catalogDir string) error {
	docs, err := catalogDocs(p, bundlesDir)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.WriteString(p.header)
	for i, d := range docs {
		body, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		// Between documents only: opm reads a "---" after the header
		// comment as an empty document and refuses the whole catalog
		// ("invalid schema: must not be empty").
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(body)
	}
	path := filepath.Join(catalogDir, p.catalogFile())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// catalogDocs are the package, its channels (each an upgrade chain along
// the CSVs' spec.replaces) and its bundles, oldest first.
func catalogDocs(p operatorPackage, bundlesDir string) ([]any, error) {
	entries, err := os.ReadDir(bundlesDir)
	if err != nil {
		return nil, err
	}
	var bundles []*manifests.Bundle
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := manifests.GetBundleFromDir(filepath.Join(bundlesDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", e.Name(), err)
		}
		if b.Package != p.name {
			return nil, fmt.Errorf("bundle %s is of package %q, not %q", e.Name(), b.Package, p.name)
		}
		bundles = append(bundles, b)
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("no bundle under %s", bundlesDir)
	}
	slices.SortFunc(bundles, func(a, b *manifests.Bundle) int { return a.CSV.Spec.Version.Compare(b.CSV.Spec.Version.Version) })

	docs := []any{fbcPackage{Schema: "olm.package", Name: p.name, DefaultChannel: bundles[0].DefaultChannel, Description: p.description}}
	channels := map[string]*fbcChannel{}
	var names []string
	for _, b := range bundles {
		for _, ch := range b.Channels {
			if channels[ch] == nil {
				channels[ch] = &fbcChannel{Schema: "olm.channel", Package: p.name, Name: ch}
				names = append(names, ch)
			}
			channels[ch].Entries = append(channels[ch].Entries, fbcEntry{Name: b.CSV.Name, Replaces: b.CSV.Spec.Replaces})
		}
	}
	slices.Sort(names)
	for _, n := range names {
		docs = append(docs, *channels[n])
	}
	for _, b := range bundles {
		fb, err := catalogBundle(p, b)
		if err != nil {
			return nil, err
		}
		docs = append(docs, fb)
	}
	return docs, nil
}

// catalogBundle is b as an olm.bundle: its package and version, the APIs it
// provides (what OLM resolves on), and every object of the bundle.
func catalogBundle(p operatorPackage, b *manifests.Bundle) (fbcBundle, error) {
	fb := fbcBundle{Schema: "olm.bundle", Name: b.CSV.Name, Package: p.name}
	fb.Properties = append(fb.Properties, fbcProperty{Type: "olm.package",
		Value: map[string]string{"packageName": p.name, "version": b.CSV.Spec.Version.String()}})
	for _, o := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(o.Name, ".")
		fb.Properties = append(fb.Properties, fbcProperty{Type: "olm.gvk",
			Value: map[string]string{"group": group, "kind": o.Kind, "version": o.Version}})
	}
	for _, o := range b.Objects {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return fb, err
		}
		fb.Properties = append(fb.Properties, fbcProperty{Type: "olm.bundle.object",
			Value: map[string]string{"data": base64.StdEncoding.EncodeToString(raw)}})
	}
	for _, ri := range b.CSV.Spec.RelatedImages {
		fb.RelatedImages = append(fb.RelatedImages, fbcRelatedImage{Name: ri.Name, Image: ri.Image})
	}
	return fb, nil
}
