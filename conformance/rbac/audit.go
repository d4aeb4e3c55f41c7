// Package rbac derives the API access an operator actually used from the
// API-server audit log and compares it with what its bindings grant.
package rbac

import (
	"fmt"
	"sort"
	"time"

	"github.com/etcdproof/etcdproof/conformance/audit"
)

// Use is one kind of request the operator made.
type Use struct {
	// Namespace is empty for cluster-scoped or all-namespace requests.
	Namespace string `json:"namespace,omitempty"`
	APIGroup  string `json:"apiGroup"`
	// Resource includes the subresource, e.g. "pods/exec".
	Resource string `json:"resource"`
	Verb     string `json:"verb"`
}

func (u Use) String() string {
	scope := "cluster"
	if u.Namespace != "" {
		scope = "ns/" + u.Namespace
	}
	return fmt.Sprintf("%s %s %s.%s", scope, u.Verb, u.Resource, groupName(u.APIGroup))
}

func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// selfReviews are the group/resource of the requests system:basic-user allows.
var selfReviews = map[string]bool{
	"authorization.k8s.io/selfsubjectaccessreviews": true,
	"authorization.k8s.io/selfsubjectrulesreviews":  true,
	"authentication.k8s.io/selfsubjectreviews":      true,
}

// Username is how the API server names a ServiceAccount.
func Username(namespace, serviceAccount string) string {
	return "system:serviceaccount:" + namespace + ":" + serviceAccount
}

// DeriveUses reads the audit log at path (its rotated backups included,
// see audit.Read) and returns the distinct requests made by user since a
// time (zero: all), sorted. Non-resource requests are skipped, and so are
// self reviews (a client asking what it may do): Kubernetes' default
// policy allows them to every authenticated user (system:basic-user), and
// they change nothing.
func DeriveUses(path, user string, since time.Time) ([]Use, error) {
	seen := map[Use]bool{}
	_, err := audit.Read(path, since, func(ev *audit.Event) error {
		ref := ev.ObjectRef
		if ev.User.Username != user || ref == nil || ref.Resource == "" || selfReviews[ref.APIGroup+"/"+ref.Resource] {
			return nil
		}
		res := ref.Resource
		if ref.Subresource != "" {
			res += "/" + ref.Subresource
		}
		seen[Use{Namespace: ref.Namespace, APIGroup: ref.APIGroup, Resource: res, Verb: ev.Verb}] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	uses := make([]Use, 0, len(seen))
	for u := range seen {
		uses = append(uses, u)
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].String() < uses[j].String() })
	return uses, nil
}
