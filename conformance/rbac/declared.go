package rbac

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ReadDeclared reads the rules an operator declares it needs (a profile's
// rbac.declaredRole): the Role and ClusterRole objects in a YAML file or in a
// kustomize directory and the resources it lists. A Role's rules count in
// namespace (the operator's: an install overlay sets its namespace, so the
// one in the file says nothing), a ClusterRole's cluster-wide, as if bound
// to the operator. Other objects are skipped; no rule at all is an error.
//
// Kustomize is read, not run: only `resources` are followed, and a
// kustomization with anything that could change or remove a Role (patches,
// components, transformers...) is refused, so what is judged is exactly
// what the files say.
func ReadDeclared(path, namespace string) ([]Grant, error) {
	var grants []Grant
	err := walkDeclared(path, map[string]bool{}, func(file string, o roleObject) {
		kind := o.Kind
		ns := namespace
		if kind == "ClusterRole" {
			ns = ""
		}
		for _, r := range o.Rules {
			grants = append(grants, Grant{Namespace: ns, Rule: r, Source: fmt.Sprintf("declared %s %s (%s)", kind, o.Metadata.Name, displayPath(file))})
		}
	})
	if err != nil {
		return nil, err
	}
	if len(grants) == 0 {
		return nil, fmt.Errorf("%s holds no Role or ClusterRole rules", path)
	}
	return grants, nil
}

// roleObject is the part of a Role, ClusterRole or List the check reads.
type roleObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Rules           []rbacv1.PolicyRule `json:"rules"`
	AggregationRule json.RawMessage     `json:"aggregationRule"`
	Items           []json.RawMessage   `json:"items"`
}

// kustomizationFiles are the names kustomize looks for, in its order.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// kustomizationKeys are the fields of a kustomization that cannot change a
// Role's rules or remove one; any other field is refused.
var kustomizationKeys = []string{"apiVersion", "kind", "metadata", "resources", "bases", "namespace",
	"namePrefix", "nameSuffix", "commonLabels", "labels", "commonAnnotations", "images",
	"configMapGenerator", "secretGenerator", "generatorOptions", "buildMetadata", "sortOptions"}

func walkDeclared(path string, seen map[string]bool, visit func(file string, o roleObject)) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if seen[abs] {
		return nil
	}
	seen[abs] = true
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return readRoleFile(abs, visit)
	}
	var kfile string
	for _, name := range kustomizationFiles {
		if _, err := os.Stat(filepath.Join(abs, name)); err == nil {
			kfile = filepath.Join(abs, name)
			break
		}
	}
	if kfile == "" {
		return fmt.Errorf("%s is a directory without a kustomization.yaml", path)
	}
	raw, err := os.ReadFile(kfile)
	if err != nil {
		return err
	}
	var k map[string]json.RawMessage
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return fmt.Errorf("%s: %w", kfile, err)
	}
	for key := range k {
		if !slices.Contains(kustomizationKeys, key) {
			return fmt.Errorf("%s: %q could change or remove Roles, and the rbac check reads resources only: list the Role files in resources", kfile, key)
		}
	}
	var refs struct {
		Resources []string `json:"resources"`
		Bases     []string `json:"bases"`
	}
	if err := yaml.Unmarshal(raw, &refs); err != nil {
		return fmt.Errorf("%s: %w", kfile, err)
	}
	for _, r := range append(refs.Resources, refs.Bases...) {
		if strings.Contains(r, "://") {
			return fmt.Errorf("%s: %s: only local files are read, not remote resources", kfile, r)
		}
		if err := walkDeclared(filepath.Join(abs, r), seen, visit); err != nil {
			return fmt.Errorf("%s: %w", kfile, err)
		}
	}
	return nil
}

func readRoleFile(file string, visit func(file string, o roleObject)) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := visitDoc(file, doc, visit); err != nil {
			return err
		}
	}
}

func visitDoc(file string, doc []byte, visit func(file string, o roleObject)) error {
	var o roleObject
	if err := yaml.Unmarshal(doc, &o); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	switch {
	case strings.HasSuffix(o.Kind, "List"):
		for _, item := range o.Items {
			if err := visitDoc(file, item, visit); err != nil {
				return err
			}
		}
	case !strings.HasPrefix(o.APIVersion, rbacv1.GroupName+"/") || (o.Kind != "Role" && o.Kind != "ClusterRole"):
	case len(o.AggregationRule) > 0 && string(o.AggregationRule) != "null":
		return fmt.Errorf("%s: ClusterRole %s aggregates other ClusterRoles, whose rules the file does not hold: declare the rules themselves", file, o.Metadata.Name)
	default:
		visit(file, o)
	}
	return nil
}

// displayPath names a file relative to the working directory (the
// repository's root in a run) when it is below it.
func displayPath(file string) string {
	wd, err := os.Getwd()
	if err != nil {
		return file
	}
	rel, err := filepath.Rel(wd, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return rel
}
