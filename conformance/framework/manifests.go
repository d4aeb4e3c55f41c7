package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// manifest is one object of an apply or delete step, with where it came
// from for errors.
type manifest struct {
	obj *unstructured.Unstructured
	// source is the file, URL or kustomization directory it was read from.
	source string
}

// String names the object as errors show it: "Deployment ns/name", or
// "ClusterRole name" for one without a namespace.
func (m manifest) String() string {
	if ns := m.obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", m.obj.GetKind(), ns, m.obj.GetName())
	}
	return fmt.Sprintf("%s %s", m.obj.GetKind(), m.obj.GetName())
}

// from names the object and, when it is not path (the step's), the file
// it was read from.
func (m manifest) from(path string) string {
	if m.source == path {
		return m.String()
	}
	return fmt.Sprintf("%s (from %s)", m, m.source)
}

// manifestExtensions are the files kubectl reads from a directory given
// with -f (one level, no recursion).
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// loadManifests reads the objects of an apply or delete step's path, in the
// order kubectl would apply them:
//   - a directory holding a kustomization is built with kustomize, as
//     `kubectl apply -k` does, in kustomize's legacy order (Namespaces,
//     CRDs and the like first) unless the kustomization sets sortOptions;
//   - another directory is its .json, .yaml and .yml files in name order,
//     as `kubectl apply -f <dir>`;
//   - a file, or an http(s) URL, is multi-document YAML or JSON, in order.
//
// Lists are expanded to their items, empty documents skipped. A path that
// holds no object is an error.
func loadManifests(ctx context.Context, path string) ([]manifest, error) {
	var (
		objs []manifest
		err  error
	)
	if profile.IsURL(path) {
		objs, err = loadURL(ctx, path)
	} else {
		objs, err = loadPath(path)
	}
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s holds no objects", path)
	}
	return objs, nil
}

func loadPath(path string) ([]manifest, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return loadFile(path)
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			return kustomizeBuild(path)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var objs []manifest
	for _, entry := range entries {
		if entry.IsDir() || !slices.Contains(manifestExtensions, filepath.Ext(entry.Name())) {
			continue
		}
		more, err := loadFile(filepath.Join(path, entry.Name()))
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

func loadFile(file string) ([]manifest, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeManifests(raw, file)
}

// kustomizeBuild runs `kustomize build dir` as kubectl apply -k does:
// default options (plugins off, files loaded from below the
// kustomization's root only). kubectl asks for the legacy order; an
// unspecified one is the same unless the kustomization sets sortOptions,
// which then win, as they do in kubectl (which warns about it).
func kustomizeBuild(dir string) ([]manifest, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return decodeManifests(out, dir)
}

// loadURL fetches a manifest as `kubectl apply -f <url>` does: one GET,
// anything but 200 OK is an error.
func loadURL(ctx context.Context, url string) ([]manifest, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: the server answered %s", url, resp.Status)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	return decodeManifests(raw, url)
}

// decodeManifests decodes the YAML or JSON documents of raw, read from
// source. Numbers stay int64 where they are whole (unstructured's JSON
// decoding), as the API server expects them.
func decodeManifests(raw []byte, source string) ([]manifest, error) {
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var objs []manifest
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		where := fmt.Sprintf("%s, document %d", source, n)
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue // empty, or comments only
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			if runtime.IsMissingKind(err) {
				return nil, fmt.Errorf("%s: the object has no kind", where)
			}
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		items := []*unstructured.Unstructured{obj}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			items = items[:0]
			for i := range list.Items {
				items = append(items, &list.Items[i])
			}
		}
		for _, item := range items {
			if item.GetAPIVersion() == "" || item.GetKind() == "" {
				return nil, fmt.Errorf("%s: an object without apiVersion or kind (%s %q)", where, item.GetKind(), item.GetName())
			}
			objs = append(objs, manifest{obj: item, source: source})
		}
	}
}
