// Package rbac derives the API access an operator actually used from the
// API-server audit log and compares it with what its bindings grant.
package rbac

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
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

type auditEvent struct {
	Stage                    string    `json:"stage"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	Verb                     string    `json:"verb"`
	User                     struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
}

// Username is how the API server names a ServiceAccount.
func Username(namespace, serviceAccount string) string {
	return "system:serviceaccount:" + namespace + ":" + serviceAccount
}

// DeriveUses reads an audit log (JSON lines) and returns the distinct
// requests made by user since a time (zero: all), sorted. Non-resource
// requests are skipped.
func DeriveUses(r io.Reader, user string, since time.Time) ([]Use, error) {
	seen := map[Use]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		raw := sc.Bytes()
		if len(strings.TrimSpace(string(raw))) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", line, err)
		}
		if ev.User.Username != user || ev.ObjectRef == nil || ev.ObjectRef.Resource == "" || ev.RequestReceivedTimestamp.Before(since) {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		seen[Use{Namespace: ev.ObjectRef.Namespace, APIGroup: ev.ObjectRef.APIGroup, Resource: res, Verb: ev.Verb}] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	uses := make([]Use, 0, len(seen))
	for u := range seen {
		uses = append(uses, u)
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].String() < uses[j].String() })
	return uses, nil
}
