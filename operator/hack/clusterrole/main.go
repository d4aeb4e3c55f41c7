// Command clusterrole turns the generated namespaced Role into the ClusterRole
// used by the cluster-wide install (stdin → stdout), so both grant exactly the
// same verbs and only the scope differs. Leader election is not part of it:
// it needs a Lease in the operator's namespace only, which a separate Role grants.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "clusterrole:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("reading the Role: %w", err)
	}
	var role rbacv1.Role
	if err := yaml.Unmarshal(raw, &role); err != nil {
		return fmt.Errorf("parsing the Role: %w", err)
	}
	if role.Kind != "Role" {
		return fmt.Errorf("expected one Role, got kind %q", role.Kind)
	}
	for _, rule := range role.Rules {
		if slices.Contains(rule.APIGroups, "coordination.k8s.io") {
			return fmt.Errorf("the Role grants %v in coordination.k8s.io: leader election is used in the operator's "+
				"namespace only and belongs in manifests/rbac/leader_election_role.yaml, not in a ClusterRole", rule.Resources)
		}
	}
	cr := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]any{"name": role.Name},
		"rules":      role.Rules,
	}
	body, err := yaml.Marshal(cr)
	if err != nil {
		return fmt.Errorf("writing the ClusterRole: %w", err)
	}
	_, err = fmt.Fprintf(out, "# Generated from manifests/rbac/role.yaml by operator/hack/clusterrole (make manifests); do not edit.\n---\n%s", body)
	return err
}
