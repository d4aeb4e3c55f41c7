package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// csvPrefix names every CSV: etcd-operator.v<version>.
	csvPrefix = "etcd-operator"
	// packageName is not "etcd", the community catalog's package of coreos
	// etcd-operator, so both can sit in one cluster's catalogs.
	packageName = "etcdproof-etcd-operator"
	channel     = "stable"
	// minKubeVersion: the CRDs' CEL rules, which refuse etcd downgrades and
	// minor-version skips at the API, are on by default from 1.25 on.
	minKubeVersion = "1.25.0"
	projectURL     = "https://github.com/etcdproof/etcdproof"
	// suggestedNamespace is where the plain install (manifests/) puts it.
	suggestedNamespace = "etcd-operator-system"
)

// installModes: OLM hands the operator its targets through $WATCH_NAMESPACE
// (see olmDeployment): one namespace in OwnNamespace and SingleNamespace
// mode, which the operator watches; "" in AllNamespaces, which it takes for
// every namespace (as --cluster-wide). MultiNamespace hands it a list, which
// it refuses: it watches one namespace or all.
var installModes = []v1alpha1.InstallMode{
	{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
	{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true},
	{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
	{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true},
}

const description = `The reference etcd operator of [etcdproof](` + projectURL + `), a conformance suite for etcd operators.

It is a drop-in for coreos etcd-operator v0.9.4: the same API (` + "`etcd.database.coreos.com/v1beta2`" + `:
EtcdCluster, EtcdBackup, EtcdRestore), the same pod, Service and label names and the same Event
reasons, so coreos' EtcdCluster objects apply unchanged. It adds members as learners and promotes
them once caught up, upgrades one member at a time (leader last) and refuses downgrades and
minor-version skips, replaces dead members only while quorum holds, keeps a PodDisruptionBudget over
the voting members, and backs up to and restores from S3-compatible storage or a PersistentVolumeClaim.

The operator manages the EtcdClusters of its own namespace (OwnNamespace), of the one namespace its
OperatorGroup targets (SingleNamespace), or of every namespace (AllNamespaces). It does not support
MultiNamespace OperatorGroups.

Its CRDs are coreos etcd-operator's (same group and kinds): do not install it beside coreos
etcd-operator or another package that owns ` + "`etcd.database.coreos.com`" + `.`

// bundleSpec says which release a bundle is.
type bundleSpec struct {
	version  semver.Version
	image    string
	replaces string // a CSV name, "" for the first release
}

func csvName(v semver.Version) string { return fmt.Sprintf("%s.v%s", csvPrefix, v) }

// buildCSV describes the operator of in, as release b, for OLM.
// examples are the JSON objects of alm-examples, which OLM's console offers
// as the starting point of a new object.
func buildCSV(in install, b bundleSpec, examples []json.RawMessage) (*v1alpha1.ClusterServiceVersion, error) {
	d, err := olmDeployment(in.deployment, b.image)
	if err != nil {
		return nil, err
	}
	owned, err := ownedCRDs(in.crds)
	if err != nil {
		return nil, err
	}
	almExamples, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return nil, err
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	strategy := v1alpha1.StrategyDetailsDeployment{
		DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{{Name: d.Name, Label: d.Labels, Spec: d.Spec}},
	}
	if len(in.roles) > 0 {
		strategy.Permissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: in.roles}}
	}
	if len(in.clusterRoles) > 0 {
		strategy.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: in.clusterRoles}}
	}
	return &v1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.ClusterServiceVersionAPIVersion, Kind: v1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: csvName(b.version),
			Annotations: map[string]string{
				"alm-examples":   string(almExamples),
				"capabilities":   "Full Lifecycle",
				"categories":     "Database",
				"containerImage": b.image,
				"description":    "etcd clusters on Kubernetes; a drop-in for coreos etcd-operator v0.9.4.",
				"repository":     projectURL,
				"support":        "etcdproof",
				"operatorframework.io/suggested-namespace": suggestedNamespace,
			},
		},
		Spec: v1alpha1.ClusterServiceVersionSpec{
			DisplayName:               "etcd operator (etcdproof)",
			Description:               description,
			Keywords:                  []string{"etcd", "key value", "database", "coreos", "etcd-operator"},
			Maintainers:               []v1alpha1.Maintainer{{Name: "etcdproof project"}},
			Provider:                  v1alpha1.AppLink{Name: "etcdproof", URL: projectURL},
			Links:                     []v1alpha1.AppLink{{Name: "Source", URL: projectURL}},
			Maturity:                  "alpha",
			Version:                   version.OperatorVersion{Version: b.version},
			Replaces:                  b.replaces,
			MinKubeVersion:            minKubeVersion,
			InstallModes:              installModes,
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: owned},
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: v1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy},
			RelatedImages:             []v1alpha1.RelatedImage{{Name: operatorContainer, Image: b.image}},
		},
	}, nil
}

// ownedCRDs lists every served version of every CRD, described by the
// schema's root description, which controller-gen copies from the Go
// type's doc comment (operator/api/v1beta2).
func ownedCRDs(crds []crdFile) ([]v1alpha1.CRDDescription, error) {
	var owned []v1alpha1.CRDDescription
	for _, f := range crds {
		c := f.crd
		for _, v := range c.Spec.Versions {
			if !v.Served {
				continue
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || v.Schema.OpenAPIV3Schema.Description == "" {
				return nil, fmt.Errorf("CRD %s version %s has no schema description to show in the CSV (document the Go type)", c.Name, v.Name)
			}
			owned = append(owned, v1alpha1.CRDDescription{
				Name:        c.Name,
				Version:     v.Name,
				Kind:        c.Spec.Names.Kind,
				DisplayName: displayName(c.Spec.Names.Kind),
				Description: strings.Join(strings.Fields(v.Schema.OpenAPIV3Schema.Description), " "),
			})
		}
	}
	return owned, nil
}

var wordStart = regexp.MustCompile(`([a-z])([A-Z])`)

// displayName spells a kind for people: EtcdCluster → "etcd Cluster"
// (etcd is written in lower case, as its project writes it).
func displayName(kind string) string {
	words := wordStart.ReplaceAllString(kind, "$1 $2")
	if rest, ok := strings.CutPrefix(words, "Etcd "); ok {
		return "etcd " + rest
	}
	return words
}
