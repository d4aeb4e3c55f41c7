package main

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// crdFile is one CRD of the install: typed for the CSV's owned list, and
// as kustomize wrote it for the bundle, so the bundle ships the very bytes
// `kubectl apply -k` would.
type crdFile struct {
	crd  apiextensionsv1.CustomResourceDefinition
	yaml []byte
}

// install is what the plain install (kustomize build of manifests/base)
// holds, sorted into what a bundle needs: CRDs as files, the Deployment and
// the RBAC of its ServiceAccount for the CSV.
type install struct {
	crds       []crdFile
	deployment appsv1.Deployment
	// roles and clusterRoles are the rules bound to the Deployment's
	// ServiceAccount, each list in the order of its bindings' names.
	roles, clusterRoles []rbacv1.PolicyRule
}

// kustomizeBuild runs `kustomize build dir` with kubectl's defaults, as the
// conformance framework does (plugins off, files below the root only).
func kustomizeBuild(dir string) ([]*resource.Resource, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return m.Resources(), nil
}

// loadInstall sorts the kustomize output of dir. A kind it does not know is
// an error: a new manifest in the install (a Service, a ConfigMap) must be
// given a place in the bundle deliberately, not dropped without a word.
func loadInstall(dir string) (install, error) {
	res, err := kustomizeBuild(dir)
	if err != nil {
		return install{}, err
	}
	var in install
	var deployments int
	roles := map[string][]rbacv1.PolicyRule{}
	clusterRoles := map[string][]rbacv1.PolicyRule{}
	var roleBindings, clusterRoleBindings []rbacv1.RoleBinding
	for _, r := range res {
		raw, err := r.AsYAML()
		if err != nil {
			return install{}, err
		}
		id := r.GetKind() + "/" + r.GetName()
		switch r.GetKind() {
		case "CustomResourceDefinition":
			c := crdFile{yaml: raw}
			err = yaml.UnmarshalStrict(raw, &c.crd)
			in.crds = append(in.crds, c)
		case "Deployment":
			deployments++
			err = yaml.UnmarshalStrict(raw, &in.deployment)
		case "Role":
			var role rbacv1.Role
			err = yaml.UnmarshalStrict(raw, &role)
			roles[role.Name] = role.Rules
		case "ClusterRole":
			var role rbacv1.ClusterRole
			err = yaml.UnmarshalStrict(raw, &role)
			clusterRoles[role.Name] = role.Rules
		case "RoleBinding", "ClusterRoleBinding":
			// Both kinds share their fields; only the scope differs.
			var b rbacv1.RoleBinding
			err = yaml.Unmarshal(raw, &b)
			if r.GetKind() == "RoleBinding" {
				roleBindings = append(roleBindings, b)
			} else {
				clusterRoleBindings = append(clusterRoleBindings, b)
			}
		case "ServiceAccount", "Namespace":
			// OLM creates the ServiceAccounts named in the CSV's permissions
			// (a bundle that ships one is refused), and installs into the
			// namespace of the OperatorGroup, not one of ours.
		default:
			return install{}, fmt.Errorf("%s: %s has no place in the bundle yet (teach operator/hack/bundle where it goes)", dir, id)
		}
		if err != nil {
			return install{}, fmt.Errorf("%s: %w", id, err)
		}
	}
	if deployments != 1 {
		return install{}, fmt.Errorf("%s: expected exactly one Deployment, found %d", dir, deployments)
	}
	if len(in.crds) == 0 {
		return install{}, fmt.Errorf("%s: no CustomResourceDefinition", dir)
	}
	slices.SortFunc(in.crds, func(a, b crdFile) int { return strings.Compare(a.crd.Name, b.crd.Name) })
	sa := in.deployment.Spec.Template.Spec.ServiceAccountName
	if in.roles, err = boundRules(sa, "Role", roleBindings, roles); err != nil {
		return install{}, err
	}
	if in.clusterRoles, err = boundRules(sa, "ClusterRole", clusterRoleBindings, clusterRoles); err != nil {
		return install{}, err
	}
	if len(in.roles)+len(in.clusterRoles) == 0 {
		return install{}, fmt.Errorf("%s: no Role or ClusterRole is bound to ServiceAccount %q", dir, sa)
	}
	return in, nil
}

// boundRules gathers the rules of every role of kind that a binding grants
// to ServiceAccount sa, in the order of the bindings' names (stable output).
func boundRules(sa, kind string, bindings []rbacv1.RoleBinding, roles map[string][]rbacv1.PolicyRule) ([]rbacv1.PolicyRule, error) {
	slices.SortFunc(bindings, func(a, b rbacv1.RoleBinding) int { return strings.Compare(a.Name, b.Name) })
	var rules []rbacv1.PolicyRule
	for _, b := range bindings {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" && s.Name == sa }) {
			continue
		}
		if b.RoleRef.Kind != kind {
			// A RoleBinding to a ClusterRole grants it in one namespace;
			// a CSV has no way to say that, so refuse rather than widen it.
			return nil, fmt.Errorf("binding %s refers to a %s; the CSV can only carry a %s here", b.Name, b.RoleRef.Kind, kind)
		}
		r, ok := roles[b.RoleRef.Name]
		if !ok {
			return nil, fmt.Errorf("binding %s refers to %s %q, which the install does not hold", b.Name, kind, b.RoleRef.Name)
		}
		rules = append(rules, r...)
	}
	return rules, nil
}
