// Package crdinstall registers the operator's CRDs from the operator itself
// (--create-crd, on by default like coreos etcd-operator): EtcdCluster, and
// EtcdBackup and EtcdRestore, which coreos' backup and restore operators
// registered and which this operator serves too. Each is the generated v1
// CRD, or the derived apiextensions v1beta1 one where the API server does not
// serve v1 or refuses the v1 CRD (1.16).
package crdinstall

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Copies of manifests/crd and manifests/crd-v1beta1, made by `make manifests`.
//
//go:embed crds
var embedded embed.FS

// Resources are the plural names of the CRDs, EtcdCluster's first: Install
// registers them in this order, and the first decides Result.APIVersion.
var Resources = []string{"etcdclusters", "etcdbackups", "etcdrestores"}

// raw returns the embedded CRD of resource in apiextensions version dir
// ("v1" or "v1beta1").
func raw(dir, resource string) []byte {
	b, err := embedded.ReadFile("crds/" + dir + "/" + resource + ".yaml")
	if err != nil {
		panic(err) // the embedded files are fixed at build time
	}
	return b
}

// The API versions the CRD can be registered with.
const (
	APIv1      = "apiextensions.k8s.io/v1"
	APIv1beta1 = "apiextensions.k8s.io/v1beta1"
)

// establishTimeout bounds the wait for a new CRD to be served.
const establishTimeout = time.Minute

// Options change the CRD that is registered.
type Options struct {
	// WithoutStatusSubresource registers the CRD without the status
	// subresource, for an operator that may not write etcdclusters/status
	// (coreos' Role): it then writes status with the object itself, which
	// an API server ignores when the subresource exists.
	WithoutStatusSubresource bool
}

// Result says what Install did.
type Result struct {
	// APIVersion is the apiextensions version the CRD was written with.
	APIVersion string
	// Created is false when an existing CRD was updated.
	Created bool
}

// Install creates the CRDs, or updates existing ones (coreos' own, say) to
// this operator's, and waits until they are established. served says whether
// the API server serves a group/version. A refused write comes back as the
// API server's error (apierrors.IsForbidden tells).
func Install(ctx context.Context, c client.Client, served func(groupVersion string) (bool, error), opts Options) (Result, error) {
	var first Result
	for i, resource := range Resources {
		res, err := install(ctx, c, served, resource, opts)
		if err != nil {
			return Result{}, err
		}
		if i == 0 {
			first = res
		}
	}
	return first, nil
}

// install registers the CRD of one resource.
func install(ctx context.Context, c client.Client, served func(groupVersion string) (bool, error), resource string, opts Options) (Result, error) {
	var candidates []*unstructured.Unstructured
	for _, v := range []struct {
		apiVersion string
		raw        []byte
	}{{APIv1, raw("v1", resource)}, {APIv1beta1, raw("v1beta1", resource)}} {
		ok, err := served(v.apiVersion)
		if err != nil {
			return Result{}, fmt.Errorf("discovering %s: %w", v.apiVersion, err)
		}
		if !ok {
			continue
		}
		crd, err := Decode(v.raw, opts)
		if err != nil {
			return Result{}, err
		}
		candidates = append(candidates, crd)
	}
	if len(candidates) == 0 {
		return Result{}, errors.New("the API server serves neither apiextensions.k8s.io/v1 nor v1beta1")
	}
	for i, crd := range candidates {
		created, err := createOrUpdate(ctx, c, crd)
		if apierrors.IsInvalid(err) && i+1 < len(candidates) {
			continue // 1.16 serves v1 but refuses the v1 CRD's nested defaults
		}
		if err != nil {
			return Result{}, fmt.Errorf("writing the %s CRD: %w", crd.GetAPIVersion(), err)
		}
		if err := waitEstablished(ctx, c, crd); err != nil {
			return Result{}, err
		}
		return Result{APIVersion: crd.GetAPIVersion(), Created: created}, nil
	}
	panic("unreachable")
}

// Decode reads an embedded CRD and applies opts.
func Decode(raw []byte, opts Options) (*unstructured.Unstructured, error) {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		return nil, fmt.Errorf("reading the embedded CRD: %w", err)
	}
	if opts.WithoutStatusSubresource {
		dropStatusSubresource(crd.Object)
	}
	return crd, nil
}

// dropStatusSubresource removes subresources.status from the spec (v1beta1)
// and from every version (v1 and v1beta1).
func dropStatusSubresource(obj map[string]any) {
	drop := func(m map[string]any) {
		sub, ok := m["subresources"].(map[string]any)
		if !ok {
			return
		}
		delete(sub, "status")
		if len(sub) == 0 {
			delete(m, "subresources")
		}
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	drop(spec)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			drop(m)
		}
	}
}

// createOrUpdate creates crd, or replaces the spec of the existing CRD with
// crd's (keeping its other metadata).
func createOrUpdate(ctx context.Context, c client.Client, crd *unstructured.Unstructured) (created bool, err error) {
	err = c.Create(ctx, crd.DeepCopy())
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err == nil, err
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(crd.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), existing); err != nil {
		return false, err
	}
	existing.Object["spec"] = crd.Object["spec"]
	annotations := existing.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range crd.GetAnnotations() {
		annotations[k] = v
	}
	existing.SetAnnotations(annotations)
	return false, c.Update(ctx, existing)
}

// waitEstablished waits until the API server serves the CRD.
func waitEstablished(ctx context.Context, c client.Client, crd *unstructured.Unstructured) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			switch {
			case cond["type"] == "Established" && cond["status"] == "True":
				return true, nil
			case cond["type"] == "NamesAccepted" && cond["status"] == "False":
				return false, fmt.Errorf("CRD %s: names not accepted: %v", crd.GetName(), cond["message"])
			}
		}
		last = "not established yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established (%s): %w", crd.GetName(), last, err)
	}
	return nil
}
