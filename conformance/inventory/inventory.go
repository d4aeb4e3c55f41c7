// Package inventory snapshots every object on a cluster or in a namespace
// (found through discovery, so nothing is missed by a hand-written list)
// and judges what an operator left behind (judge.go).
package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Object identifies one object; UID tells a recreated object from the old one.
type Object struct {
	// Resource is the plural resource, with ".group" unless core.
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
	// Created is the creationTimestamp (whole seconds).
	Created time.Time `json:"created,omitzero"`
	// Owner is the UID of the object's controller (the ownerReference
	// with controller: true), which re-creates it: a kube-proxy pod of a
	// DaemonSet, a pod of a ReplicaSet.
	Owner string `json:"owner,omitempty"`
	// For is the namespaced object a cluster-scoped one exists for, and is
	// judged as: the claim a PersistentVolume is bound to, the Service an
	// IPAddress is allocated to (1.33+ makes one per ClusterIP).
	For *Ref `json:"for,omitempty"`
}

// Ref names a namespaced object.
type Ref struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r Ref) String() string { return r.Resource + " " + r.Namespace + "/" + r.Name }

// mirrorPodAnnotation is set by the kubelet on every mirror pod.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

func (o Object) String() string {
	if o.Namespace == "" {
		return o.Resource + " " + o.Name
	}
	return o.Resource + " " + o.Namespace + "/" + o.Name
}

// Exclusion is a resource left out of the judgement, with the reason reported.
type Exclusion struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// DefaultExclusions are resources whose leftovers say nothing about the
// operator's cleanup. Nothing is excluded for being unlistable: Take lists
// only what discovery says supports list, so a resource that fails to list
// fails the check by name.
var DefaultExclusions = []Exclusion{
	{Resource: "events", Reason: "events record the run itself and expire by TTL; they are not owned state"},
	{Resource: "events.events.k8s.io", Reason: "same objects as core events, served by a second API"},
}

// Unlisted is a resource that could not be listed: whatever it holds is
// unknown, so a judgement that needs it cannot pass.
type Unlisted struct {
	Resource string `json:"resource"`
	// Namespaced is false for a cluster-scoped resource, true otherwise and
	// when unknown (a group/version that failed discovery).
	Namespaced bool   `json:"namespaced"`
	Error      string `json:"error"`
}

func (u Unlisted) String() string { return u.Resource + ": " + u.Error }

// Snapshot is every listed object.
type Snapshot struct {
	Objects []Object `json:"objects"`
	// Skipped lists resources that could not be listed, with the error.
	Skipped []Unlisted `json:"skipped,omitempty"`
}

// Take lists every listable resource the discovery API serves.
func Take(ctx context.Context, disc discovery.DiscoveryInterface, dyn dynamic.Interface) (Snapshot, error) {
	return take(ctx, disc, dyn, "")
}

// TakeNamespace lists every listable namespaced resource in one namespace.
func TakeNamespace(ctx context.Context, disc discovery.DiscoveryInterface, dyn dynamic.Interface, namespace string) (Snapshot, error) {
	if namespace == "" {
		return Snapshot{}, errors.New("inventory of a namespace: no namespace given")
	}
	return take(ctx, disc, dyn, namespace)
}

func take(ctx context.Context, disc discovery.DiscoveryInterface, dyn dynamic.Interface, namespace string) (Snapshot, error) {
	var snap Snapshot
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		// An aggregated API that does not answer drops out of discovery:
		// what it serves is unknown, not empty.
		var partial *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &partial) || len(lists) == 0 {
			return Snapshot{}, fmt.Errorf("discovery: %w", err)
		}
		for gv, gerr := range partial.Groups {
			snap.Skipped = append(snap.Skipped, Unlisted{Resource: "every resource of " + gv.String(), Namespaced: true, Error: "discovery: " + gerr.Error()})
		}
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			snap.Skipped = append(snap.Skipped, Unlisted{Resource: "every resource of " + list.GroupVersion, Namespaced: true, Error: err.Error()})
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || (namespace != "" && !r.Namespaced) {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				snap.Skipped = append(snap.Skipped, Unlisted{Resource: name, Namespaced: r.Namespaced, Error: err.Error()})
				continue
			}
			for i := range items.Items {
				snap.Objects = append(snap.Objects, objectOf(name, &items.Items[i]))
			}
		}
	}
	sort.Slice(snap.Skipped, func(i, j int) bool { return snap.Skipped[i].Resource < snap.Skipped[j].Resource })
	return snap, nil
}

func objectOf(resource string, it *unstructured.Unstructured) Object {
	_, mirror := it.GetAnnotations()[mirrorPodAnnotation]
	o := Object{Resource: resource, Namespace: it.GetNamespace(), Name: it.GetName(), UID: string(it.GetUID()),
		Mirror: mirror && resource == "pods", Created: it.GetCreationTimestamp().Time}
	if ref := metav1.GetControllerOf(it); ref != nil {
		o.Owner = string(ref.UID)
	}
	switch resource {
	case "persistentvolumes":
		o.For = refAt(it, "persistentvolumeclaims", "spec", "claimRef")
	case "ipaddresses.networking.k8s.io":
		if group, _, _ := unstructured.NestedString(it.Object, "spec", "parentRef", "group"); group == "" {
			res, _, _ := unstructured.NestedString(it.Object, "spec", "parentRef", "resource")
			o.For = refAt(it, res, "spec", "parentRef")
		}
	}
	return o
}

// refAt reads the namespace and name at a field path.
func refAt(it *unstructured.Unstructured, resource string, path ...string) *Ref {
	ns, _, _ := unstructured.NestedString(it.Object, append(path, "namespace")...)
	name, _, _ := unstructured.NestedString(it.Object, append(path, "name")...)
	if ns == "" || name == "" || resource == "" {
		return nil
	}
	return &Ref{Resource: resource, Namespace: ns, Name: name}
}

// Leftovers are objects in after that were not in before (by UID), minus
// mirror pods and excluded resources: the plain diff, with no attribution.
func Leftovers(before, after Snapshot, exclusions []Exclusion) []Object {
	old := map[string]bool{}
	for _, o := range before.Objects {
		old[o.UID] = true
	}
	var left []Object
	for _, o := range after.Objects {
		if !old[o.UID] && !o.Mirror && !excluded(exclusions, o.Resource) {
			left = append(left, o)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].String() < left[j].String() })
	return left
}

func excluded(exclusions []Exclusion, resource string) bool {
	return slices.ContainsFunc(exclusions, func(e Exclusion) bool { return e.Resource == resource })
}
