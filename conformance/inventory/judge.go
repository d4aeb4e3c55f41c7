package inventory

import (
	"fmt"
	"slices"
	"sort"
)

// Retention is a resource the operator leaves behind on purpose when its
// cluster is deleted (the profile's cleanup.retains), with the reason.
type Retention struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// Rules are what a judgement leaves out or reports instead of failing.
type Rules struct {
	Exclusions []Exclusion
	Retains    []Retention
}

func (r Rules) retention(resource string) (string, bool) {
	for _, rt := range r.Retains {
		if rt.Resource == resource {
			return rt.Reason, true
		}
	}
	return "", false
}

// Finding is one object and why it counts as it does.
type Finding struct {
	Object
	Why string `json:"why"`
}

func (f Finding) String() string { return f.Object.String() + " (" + f.Why + ")" }

// Verdict is a judgement of what is left. Leftovers and Unlisted fail
// the check; Unattributed (no one can say who made it) leaves it
// incomplete; Retained and Ignored are reported.
type Verdict struct {
	Leftovers    []Finding  `json:"leftovers,omitempty"`
	Unlisted     []Unlisted `json:"unlisted,omitempty"`
	Unattributed []Finding  `json:"unattributed,omitempty"`
	Retained     []Finding  `json:"retained,omitempty"`
	// Ignored were created during the run by someone else.
	Ignored []Finding `json:"ignored,omitempty"`
}

// Clean says nothing fails the check or keeps it from being judged.
func (v Verdict) Clean() bool {
	return len(v.Leftovers) == 0 && len(v.Unlisted) == 0 && len(v.Unattributed) == 0
}

// Problems are the lines that fail the check (leftovers and unlisted
// resources), then those that leave it unjudged.
func (v Verdict) Problems() (failing, unjudged []string) {
	for _, u := range v.Unlisted {
		failing = append(failing, "cannot list "+u.String())
	}
	for _, f := range v.Leftovers {
		failing = append(failing, f.String())
	}
	for _, f := range v.Unattributed {
		unjudged = append(unjudged, f.String())
	}
	return failing, unjudged
}

// InNamespace judges the cluster's namespace once its CR is gone, before
// the namespace is deleted (which would hide what is left in it). Every
// object there now that was not there before the CR was created is the
// operator's doing (directly, or through a StatefulSet's claims, a
// Service's endpoints...) and a leftover, except objects the run created
// itself (runCreated, UIDs: the profile's extra objects), objects a
// controller from before re-created, and retained resources.
func InNamespace(before, after Snapshot, runCreated []string, rules Rules) Verdict {
	var v Verdict
	v.Unlisted = unlisted(rules, true, before, after)
	known := map[string]bool{}
	for _, o := range before.Objects {
		known[o.UID] = true
	}
	for _, uid := range runCreated {
		known[uid] = true
	}
	known = withDependents(known, before, after)
	for _, o := range newObjects(known, after, rules) {
		if reason, ok := rules.retention(o.Resource); ok {
			v.Retained = append(v.Retained, Finding{o, "retained: " + reason})
			continue
		}
		v.Leftovers = append(v.Leftovers, Finding{o, "still there after the cluster's CR was deleted"})
	}
	return v.sorted()
}

// Cluster judges the whole cluster after the run's namespaces are deleted
// and the operator is uninstalled, against the snapshot before install:
//   - anything in a namespace the run created, or such a namespace, is a
//     leftover;
//   - other namespaced objects and namespaces are attributed: leftovers if
//     the operator or the run created them, ignored if someone else did
//     (another namespace's owner, another run), unattributed if the audit
//     log cannot say;
//   - a cluster-scoped object that exists for a namespaced one (a volume
//     for its claim, an IPAddress for its Service) is judged as that one;
//   - any other new cluster-scoped object (CRDs, ClusterRoles, webhooks...)
//     is a leftover.
func Cluster(before, after Snapshot, runNamespaces []string, who Attribution, rules Rules) Verdict {
	var v Verdict
	v.Unlisted = unlisted(rules, false, before, after)
	for name, s := range map[string]Snapshot{"before install": before, "after uninstall": after} {
		if len(s.Objects) == 0 {
			// A cluster always holds objects (the default namespace): an
			// empty inventory is a failure to look, not a clean cluster.
			v.Unlisted = append(v.Unlisted, Unlisted{Resource: "the inventory " + name, Error: "it holds no object at all"})
		}
	}
	known := map[string]bool{}
	for _, o := range before.Objects {
		known[o.UID] = true
	}
	known = withDependents(known, before, after)
	ours := func(ns string) bool { return slices.Contains(runNamespaces, ns) }
	for _, o := range newObjects(known, after, rules) {
		if reason, ok := rules.retention(o.Resource); ok {
			v.Retained = append(v.Retained, Finding{o, "retained: " + reason})
			continue
		}
		switch {
		case ours(o.Namespace):
			v.Leftovers = append(v.Leftovers, Finding{o, "in namespace " + o.Namespace + ", which the run created"})
		case o.Resource == "namespaces" && ours(o.Name):
			v.Leftovers = append(v.Leftovers, Finding{o, "a namespace the run created"})
		case o.For != nil && ours(o.For.Namespace):
			v.Leftovers = append(v.Leftovers, Finding{o, "for " + o.For.String() + ", in a namespace the run created"})
		case o.For != nil:
			// Made for that object, no later than the object itself.
			of := Object{Resource: o.For.Resource, Namespace: o.For.Namespace, Name: o.For.Name, Created: o.Created}
			v.attribute(o, "for "+o.For.String()+", ", who.CreatorOf(of))
		case o.Namespace != "" || o.Resource == "namespaces" || o.Resource == "persistentvolumes":
			v.attribute(o, "", who.CreatorOf(o))
		default:
			v.Leftovers = append(v.Leftovers, Finding{o, "cluster-scoped, new since install"})
		}
	}
	return v.sorted()
}

func (v *Verdict) attribute(o Object, prefix string, c Creator) {
	switch c.Party {
	case PartyOperator:
		v.Leftovers = append(v.Leftovers, Finding{o, prefix + "created by the operator (" + c.User + ")"})
	case PartyRun:
		v.Leftovers = append(v.Leftovers, Finding{o, prefix + "created by the run (" + c.User + ")"})
	case PartyOther:
		v.Ignored = append(v.Ignored, Finding{o, prefix + "created during the run by " + c.User})
	default:
		v.Unattributed = append(v.Unattributed, Finding{o, prefix + "creator unknown: " + c.Why})
	}
}

// newObjects are the objects of after not known, once each (a resource
// served by two groups lists the same objects twice), minus mirror pods and
// excluded resources.
func newObjects(known map[string]bool, after Snapshot, rules Rules) []Object {
	seen := map[string]bool{}
	var out []Object
	for _, o := range after.Objects {
		if known[o.UID] || seen[o.UID] || o.Mirror || excluded(rules.Exclusions, o.Resource) {
			continue
		}
		seen[o.UID] = true
		out = append(out, o)
	}
	return out
}

// withDependents adds to known the objects that belong to a known one: a
// controller re-creates its dependents (a DaemonSet its pods, a Service its
// endpoint slices), and an Endpoints object belongs to the Service of the
// same name. Their lifetime is their owner's, not the run's.
func withDependents(known map[string]bool, snaps ...Snapshot) map[string]bool {
	services := map[string]string{}
	for _, s := range snaps {
		for _, o := range s.Objects {
			if o.Resource == "services" {
				services[o.Namespace+"/"+o.Name] = o.UID
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, s := range snaps {
			for _, o := range s.Objects {
				if known[o.UID] {
					continue
				}
				owner := o.Owner
				if owner == "" && o.Resource == "endpoints" {
					owner = services[o.Namespace+"/"+o.Name]
				}
				if owner != "" && known[owner] {
					known[o.UID], changed = true, true
				}
			}
		}
	}
	return known
}

// unlisted are the resources either snapshot could not list that the
// judgement needs: all of them, or only namespaced ones.
func unlisted(rules Rules, namespacedOnly bool, snaps ...Snapshot) []Unlisted {
	seen := map[string]bool{}
	var out []Unlisted
	for _, s := range snaps {
		for _, u := range s.Skipped {
			if seen[u.Resource] || excluded(rules.Exclusions, u.Resource) || (namespacedOnly && !u.Namespaced) {
				continue
			}
			seen[u.Resource] = true
			out = append(out, u)
		}
	}
	return out
}

func (v Verdict) sorted() Verdict {
	for _, fs := range [][]Finding{v.Leftovers, v.Unattributed, v.Retained, v.Ignored} {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Object.String() < fs[j].Object.String() })
	}
	sort.Slice(v.Unlisted, func(i, j int) bool { return v.Unlisted[i].Resource < v.Unlisted[j].Resource })
	return v
}

// Summary is a one-line count for the report.
func (v Verdict) Summary() string {
	return fmt.Sprintf("%d leftover(s), %d unlistable resource(s), %d unattributed, %d retained, %d created by others",
		len(v.Leftovers), len(v.Unlisted), len(v.Unattributed), len(v.Retained), len(v.Ignored))
}
