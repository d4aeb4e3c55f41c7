// Command bundle generates the Operator Lifecycle Manager (OLM v0) bundle of
// the reference operator, registry+v1 format, from its plain install
// (kustomize build of manifests/base), so the bundle cannot drift from what
// `kubectl apply -k manifests/` installs:
//
//	go run ./operator/hack/bundle -version 0.2.0 -image etcdproof/etcd-operator:next -replaces 0.1.0
//
// writes manifests/olm/bundle/0.2.0/{manifests,metadata}. With -catalog DIR
// it instead writes the file-based catalog of every bundle under -out.
//
// With -package and -csv-base it generates another operator's bundles and
// catalog, from its CSV base (Operator SDK's config/manifests/bases) and
// its kustomize install and samples, such as the example operator's:
//
//	go run ./operator/hack/bundle -package etcdproof-memcached-operator \
//	  -csv-base examples/memcached-operator/config/manifests/bases/memcached-operator.clusterserviceversion.yaml \
//	  -install examples/memcached-operator/config/default -samples examples/memcached-operator/config/samples \
//	  -out examples/memcached-operator/bundle -version 0.1.0 -image etcdproof/memcached-operator:v1
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

type options struct {
	version, image, replaces string
	out, install, samples    string
	catalog                  string
	packageName, csvBase     string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "Version of the bundle (semver, no leading v): the CSV is <prefix>.v<version> (etcd-operator.v<version>).")
	flag.StringVar(&o.image, "image", "", "Operator image the bundle's Deployment runs.")
	flag.StringVar(&o.replaces, "replaces", "", "Version this release upgrades from (spec.replaces <prefix>.v<replaces>); empty for the first.")
	flag.StringVar(&o.out, "out", "manifests/olm/bundle", "Directory of bundles: the bundle goes to <out>/<version>.")
	flag.StringVar(&o.install, "install", "manifests/base", "Kustomization of the operator's install (CRDs, RBAC, Deployment).")
	flag.StringVar(&o.samples, "samples", "manifests/samples", "Kustomization of the example objects (the CSV's alm-examples).")
	flag.StringVar(&o.catalog, "catalog", "", "Instead of a bundle, write the file-based catalog of every bundle under -out to this directory.")
	flag.StringVar(&o.packageName, "package", "", "OLM package of another operator than the reference one (with -csv-base).")
	flag.StringVar(&o.csvBase, "csv-base", "",
		"ClusterServiceVersion that another operator's CSVs start from (with -package): its metadata.name is the CSV name prefix and the operator container's name, its annotations, descriptions, links and install modes are kept, its description annotation describes the package in the catalog.")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	p, err := loadPackage(o.packageName, o.csvBase)
	if err != nil {
		return err
	}
	if o.catalog != "" {
		if o.version != "" || o.image != "" || o.replaces != "" {
			return errors.New("-catalog reads the bundles under -out: give no -version, -image or -replaces")
		}
		return writeCatalog(p, o.out, o.catalog)
	}
	b, err := parseBundleSpec(p, o.version, o.image, o.replaces)
	if err != nil {
		return err
	}
	return generate(p, o.install, o.samples, b, filepath.Join(o.out, b.version.String()))
}

func parseBundleSpec(p operatorPackage, v, image, replaces string) (bundleSpec, error) {
	if v == "" || image == "" {
		return bundleSpec{}, errors.New("-version and -image are required")
	}
	ver, err := semver.Parse(v)
	if err != nil {
		return bundleSpec{}, fmt.Errorf("-version: %w", err)
	}
	b := bundleSpec{version: ver, image: image}
	if replaces != "" {
		prev, err := semver.Parse(replaces)
		if err != nil {
			return bundleSpec{}, fmt.Errorf("-replaces: %w", err)
		}
		if !prev.LT(ver) {
			// OLM would offer the "upgrade" all the same, to an older build.
			return bundleSpec{}, fmt.Errorf("-replaces %s is not older than -version %s", prev, ver)
		}
		b.replaces = p.csvName(prev)
	}
	return b, nil
}

// generate writes the bundle b of package p, of the install and samples
// kustomizations, to dir.
func generate(p operatorPackage, installDir, samplesDir string, b bundleSpec, dir string) error {
	in, err := loadInstall(installDir)
	if err != nil {
		return err
	}
	examples, err := loadExamples(samplesDir)
	if err != nil {
		return err
	}
	csv, err := buildCSV(p, in, b, examples)
	if err != nil {
		return err
	}
	return writeBundle(p, dir, csv, in)
}

// loadExamples is the kustomize output of dir as JSON objects; no dir, no
// examples.
func loadExamples(dir string) ([]json.RawMessage, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	res, err := kustomizeBuild(dir)
	if err != nil {
		return nil, err
	}
	var examples []json.RawMessage
	for _, r := range res {
		raw, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, err
		}
		examples = append(examples, j)
	}
	return examples, nil
}
