// Package inventory snapshots every object on a cluster (found through
// discovery, so nothing is missed by a hand-written list) and diffs two
// snapshots to find what an operator left behind.
package inventory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Object identifies one object; UID tells a recreated object from the old one.
type Object struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Mirror marks a mirror pod: the kubelet's API copy of a static pod
	// (control-plane components). Kubelets delete and recreate these on their
	// own (1.16's do after start-up, so one may even be missing from the
	// snapshot before install); no operator creates them, so they never
	// count as leftovers.
	Mirror bool `json:"mirror,omitempty"`
}

// mirrorPodAnnotation is set by the kubelet on every mirror pod.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

func (o Object) String() string {
	if o.Namespace == "" {
		return o.Resource + " " + o.Name
	}
	return o.Resource + " " + o.Namespace + "/" + o.Name
}

// Exclusion is a resource left out of the diff, with the reason reported.
type Exclusion struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// DefaultExclusions are resources whose leftovers say nothing about the
// operator's cleanup.
var DefaultExclusions = []Exclusion{
	{Resource: "events", Reason: "events record the run itself and expire by TTL; they are not owned state"},
	{Resource: "events.events.k8s.io", Reason: "same objects as core events, served by a second API"},
}

// Snapshot is every listed object.
type Snapshot struct {
	Objects []Object `json:"objects"`
	// Skipped lists resources that could not be listed, with the error.
	Skipped []string `json:"skipped,omitempty"`
}

// Take lists every listable resource the discovery API serves.
func Take(ctx context.Context, disc discovery.DiscoveryInterface, dyn dynamic.Interface) (Snapshot, error) {
	lists, err := disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return Snapshot{}, fmt.Errorf("discovery: %w", err)
	}
	var snap Snapshot
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			for _, it := range items.Items {
				_, mirror := it.GetAnnotations()[mirrorPodAnnotation]
				snap.Objects = append(snap.Objects, Object{Resource: name, Namespace: it.GetNamespace(), Name: it.GetName(), UID: string(it.GetUID()),
					Mirror: mirror && name == "pods"})
			}
		}
	}
	return snap, nil
}

// Leftovers are objects in after that were not in before (by UID), minus
// mirror pods, excluded resources and objects that belong to ignored
// namespaces.
func Leftovers(before, after Snapshot, exclusions []Exclusion) []Object {
	old := map[string]bool{}
	for _, o := range before.Objects {
		old[o.UID] = true
	}
	excluded := map[string]bool{}
	for _, e := range exclusions {
		excluded[e.Resource] = true
	}
	var left []Object
	for _, o := range after.Objects {
		if !old[o.UID] && !o.Mirror && !excluded[o.Resource] {
			left = append(left, o)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].String() < left[j].String() })
	return left
}
