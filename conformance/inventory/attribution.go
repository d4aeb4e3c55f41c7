package inventory

import (
	"sort"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/audit"
)

// Party is who created an object, as far as the cleanup check cares.
type Party int

// Parties.
const (
	PartyUnknown Party = iota
	PartyOperator
	PartyRun
	PartyOther
)

// Creator is who created an object; Why says why it is unknown.
type Creator struct {
	Party Party
	User  string
	Why   string
}

// Attribution tells who created an object during the run.
type Attribution interface {
	CreatorOf(o Object) Creator
}

// Identity names the requests of the run and of the operator.
type Identity struct {
	// Operator is the operator ServiceAccount's user name.
	Operator string
	// Run is the user the run's kubeconfig authenticates as; empty when
	// the API server could not say (no SelfSubjectReview before 1.28): it
	// is then learnt from the requests carrying RunAgent.
	Run string
	// RunAgent is in the user agent of every request of the run's own
	// client; AgentPrefix starts every run's marker, so a request by Run
	// with another run's marker is another run's (same kubeconfig).
	RunAgent    string
	AgentPrefix string
}

// Unattributable is the attribution when the audit log cannot be read.
type Unattributable string

// CreatorOf is always unknown, with the reason.
func (u Unattributable) CreatorOf(Object) Creator { return Creator{Why: string(u)} }

// logAttribution attributes objects to the creations in the audit log.
type logAttribution struct {
	id Identity
	// named by resource|namespace|name; nameless (generateName) by
	// resource|namespace; both also under the plural alone, for a resource
	// served by two groups (1.16's ingresses).
	named, nameless map[string][]audit.Creation
}

// NewAttribution attributes objects through the creations an audit log
// recorded over the run.
func NewAttribution(creations []audit.Creation, id Identity) Attribution {
	a := &logAttribution{id: id, named: map[string][]audit.Creation{}, nameless: map[string][]audit.Creation{}}
	sorted := append([]audit.Creation(nil), creations...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Received.Before(sorted[j].Received) })
	for _, c := range sorted {
		if a.id.Run == "" && a.id.RunAgent != "" && strings.Contains(c.UserAgent, a.id.RunAgent) {
			a.id.Run = c.User
		}
		for _, res := range []string{c.Resource, plural(c.Resource)} {
			if c.Name == "" {
				a.nameless[res+"|"+c.Namespace] = append(a.nameless[res+"|"+c.Namespace], c)
			} else {
				a.named[res+"|"+c.Namespace+"|"+c.Name] = append(a.named[res+"|"+c.Namespace+"|"+c.Name], c)
			}
		}
	}
	return a
}

func plural(resource string) string {
	p, _, _ := strings.Cut(resource, ".")
	return "*" + p
}

// CreatorOf finds the request that created o: by name, the last creation
// received no later than the object's creationTimestamp (the server takes
// it while handling the request, in whole seconds); without a name
// (generateName), every creation in its namespace being handled during
// that second, which must agree.
func (a *logAttribution) CreatorOf(o Object) Creator {
	notAfter := func(c audit.Creation) bool {
		return o.Created.IsZero() || !c.Received.Truncate(time.Second).After(o.Created)
	}
	for _, res := range []string{o.Resource, plural(o.Resource)} {
		var pick *audit.Creation
		for _, c := range a.named[res+"|"+o.Namespace+"|"+o.Name] {
			if notAfter(c) {
				pick = &c
			}
		}
		if pick != nil {
			return a.party(*pick)
		}
	}
	if o.Created.IsZero() {
		return Creator{Why: "no creation of it in the audit log since the run started"}
	}
	found := map[Party][]Creator{}
	for _, res := range []string{o.Resource, plural(o.Resource)} {
		for _, c := range a.nameless[res+"|"+o.Namespace] {
			if notAfter(c) && !c.Completed.Before(o.Created) {
				p := a.party(c)
				found[p.Party] = append(found[p.Party], p)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	switch len(found) {
	case 0:
		return Creator{Why: "no creation of it in the audit log since the run started"}
	case 1:
		for _, cs := range found {
			return cs[0]
		}
	}
	var users []string
	for _, cs := range found {
		users = append(users, cs[0].User)
	}
	sort.Strings(users)
	return Creator{Why: "created with a generated name in the same second as objects of " + strings.Join(users, " and ") + ": cannot tell whose"}
}

func (a *logAttribution) party(c audit.Creation) Creator {
	switch {
	case c.User == a.id.Operator:
		return Creator{Party: PartyOperator, User: c.User}
	case a.id.RunAgent != "" && strings.Contains(c.UserAgent, a.id.RunAgent):
		return Creator{Party: PartyRun, User: c.User}
	case a.id.AgentPrefix != "" && strings.Contains(c.UserAgent, a.id.AgentPrefix):
		return Creator{Party: PartyOther, User: c.User + " (another run: " + c.UserAgent + ")"}
	case a.id.Run == "":
		return Creator{User: c.User, Why: "created by " + c.User + ", and the run's own user is not known"}
	case c.User == a.id.Run:
		return Creator{Party: PartyRun, User: c.User}
	}
	return Creator{Party: PartyOther, User: c.User}
}
