package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// fieldManager owns the fields install steps apply.
const fieldManager = "etcdproof"

// defaultNamespace is where a namespaced object without a namespace goes.
// kubectl would use the kubeconfig context's namespace, which is "default"
// unless the context sets one; profiles' manifests name their namespace
// (kustomize's namespace: sets it on every object), so the context's
// namespace is not read.
const defaultNamespace = metav1.NamespaceDefault

// CRDs applied in a step are usually served within a second; objects of
// their kinds later in the step wait this long for them.
const (
	crdServedTimeout  = time.Minute
	crdServedInterval = 500 * time.Millisecond
)

// crdGroupKind is the kind a CustomResourceDefinition object defines.
var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// appliedCRD is a CustomResourceDefinition applied earlier in a step.
type appliedCRD struct {
	name     string
	resource schema.GroupVersionResource
}

// applyManifests applies the objects of an install step's path (a file, a
// kustomization or other directory, a URL: loadManifests) in order, as
// `kubectl apply` did: server-side where the cluster supports it
// (serverSideApply), else create or update. An object of a kind defined by
// a CRD applied earlier in the step waits for the CRD to be served. The
// first refused object stops the step.
func (e *Env) applyManifests(ctx context.Context, path string) error {
	objs, err := loadManifests(ctx, path)
	if err != nil {
		return err
	}
	crds := map[schema.GroupKind]appliedCRD{}
	for _, m := range objs {
		if err := e.applyObject(ctx, m, crds); err != nil {
			return fmt.Errorf("%s: %w", m.from(path), err)
		}
	}
	return nil
}

// applyObject applies m.obj, which it completes (its namespace:
// resourceFor), so that errors name the object as it was sent.
func (e *Env) applyObject(ctx context.Context, m manifest, crds map[schema.GroupKind]appliedCRD) error {
	obj := m.obj
	if obj.GetName() == "" {
		return errors.New("the object has no metadata.name")
	}
	var mapping *meta.RESTMapping
	for attempt := 1; ; attempt++ {
		var err error
		mapping, err = e.applyMapping(ctx, obj.GroupVersionKind(), crds)
		if err != nil {
			return err
		}
		r := e.resourceFor(mapping, obj)
		if e.serverSideApply() {
			_, err = r.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
			if err != nil {
				err = fmt.Errorf("server-side apply: %w", err)
			}
		} else {
			err = createOrUpdate(ctx, r, obj)
		}
		if apierrors.IsNotFound(err) && attempt == 1 {
			// The resource may be gone since discovery was read (its CRD
			// deleted): map the kind again, from fresh discovery.
			e.mapper.ResetWithContext(ctx)
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if obj.GroupVersionKind().GroupKind() == crdGroupKind {
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
		crds[schema.GroupKind{Group: group, Kind: kind}] = appliedCRD{name: obj.GetName(), resource: mapping.Resource}
	}
	return nil
}

// createOrUpdate is the apply of clusters without server-side apply:
// create the object, or replace the existing one (its resourceVersion
// taken, so a concurrent change is a conflict, retried). The profiles'
// manifests are whole objects, so replacing one is what a client-side
// apply of them amounts to.
func createOrUpdate(ctx context.Context, r dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			obj.SetResourceVersion("")
			if _, err := r.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("create: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
		if _, err := r.Update(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			// Unwrapped for a conflict, so that RetryOnConflict sees it.
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("update: %w", err)
		}
		return nil
	})
}

// applyMapping maps the kind of an object to apply. A kind defined by a
// CRD applied earlier in the step is waited for, until the CRD is
// Established and discovery lists the kind (the mapper's cache may still
// know it from before the CRD was last deleted).
func (e *Env) applyMapping(ctx context.Context, gvk schema.GroupVersionKind, crds map[schema.GroupKind]appliedCRD) (*meta.RESTMapping, error) {
	crd, ours := crds[gvk.GroupKind()]
	if !ours {
		return e.mapKind(ctx, gvk)
	}
	var mapping *meta.RESTMapping
	state := "not read yet"
	err := wait.PollUntilContextTimeout(ctx, crdServedInterval, crdServedTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := e.Dynamic.Resource(crd.resource).Get(ctx, crd.name, metav1.GetOptions{})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		if !crdEstablished(obj) {
			state = "not Established"
			return false, nil
		}
		mapping, err = e.mapKind(ctx, gvk)
		if err != nil {
			state = "Established, but " + err.Error()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s, applied before in this step, does not serve %s after %s (%s)", crd.name, gvk, crdServedTimeout, state)
	}
	return mapping, nil
}

// crdEstablished reads the Established condition of a CRD (v1 or v1beta1).
func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}

// resourceFor is the dynamic client for obj's resource, in its namespace
// when the resource is namespaced (defaultNamespace when the manifest sets
// none); a namespace on a cluster-scoped object is dropped, as the API
// server would.
func (e *Env) resourceFor(mapping *meta.RESTMapping, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return e.Dynamic.Resource(mapping.Resource)
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(defaultNamespace)
	}
	return e.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
}

// deleting is an object deleteManifests waits for.
type deleting struct {
	m   manifest
	r   dynamic.ResourceInterface
	uid types.UID
}

// deleteManifests deletes the objects of an uninstall step's path, last
// first, as `kubectl delete --ignore-not-found --wait` did: objects
// already gone, or of kinds no longer served (their CRD deleted), are
// skipped; dependents are collected in the background. It then waits
// until every object it deleted is gone (or replaced by a new object of
// the same name), within the uninstall timeout; the error names those left.
func (e *Env) deleteManifests(ctx context.Context, path string) error {
	objs, err := loadManifests(ctx, path)
	if err != nil {
		return err
	}
	timeout := e.Config.Timeout("install", "uninstall")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var pending []deleting
	for i := len(objs) - 1; i >= 0; i-- {
		m := objs[i]
		d, err := e.deleteObject(ctx, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m.from(path), err)
		}
		if d != nil {
			pending = append(pending, *d)
		}
	}
	// left is, for each object, what the last look that could read it
	// found ("" once gone): a read the deadline cuts short (the client's
	// rate limiter refuses a wait that would pass it, before the context
	// ends) says nothing new, so the error names what was last seen.
	left := make([]string, len(pending))
	read := make([]bool, len(pending))
	for i, d := range pending {
		left[i] = d.m.String()
	}
	err = wait.PollUntilContextCancel(ctx, e.Config.Polling("install", "uninstall"), true, func(ctx context.Context) (bool, error) {
		done := true
		for i, d := range pending {
			still, readErr := d.stillThere(ctx)
			switch {
			case readErr == nil:
				left[i], read[i] = still, true
			case !read[i]:
				left[i] = still
			}
			if readErr != nil || still != "" {
				done = false
			}
		}
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("not deleted within %s: %s", timeout, strings.Join(slices.DeleteFunc(left, func(s string) bool { return s == "" }), "; "))
	}
	return nil
}

// deleteObject deletes one object and returns what to wait for (nil when
// there is nothing to wait for). An object already being deleted is only
// waited for: a second delete of a Terminating namespace is refused. Like
// applyObject, it completes m.obj's namespace.
func (e *Env) deleteObject(ctx context.Context, m manifest) (*deleting, error) {
	obj := m.obj
	mapping, err := e.mapKind(ctx, obj.GroupVersionKind())
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := e.resourceFor(mapping, obj)
	cur, err := r.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	if cur.GetDeletionTimestamp() == nil {
		background := metav1.DeletePropagationBackground
		err := r.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("delete: %w", err)
		}
	}
	return &deleting{m: m, r: r, uid: cur.GetUID()}, nil
}

// stillThere describes the object if it still exists, "" once it is gone;
// the error is a read that failed (the description then says so).
func (d deleting) stillThere(ctx context.Context) (string, error) {
	cur, err := d.r.Get(ctx, d.m.obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return fmt.Sprintf("%s (could not read it: %v)", d.m, err), err
	case cur.GetUID() != d.uid:
		return "", nil
	case cur.GetDeletionTimestamp() == nil:
		return d.m.String(), nil
	}
	// A Namespace's finalizers are in its spec (the namespace controller's).
	specFinalizers, _, _ := unstructured.NestedStringSlice(cur.Object, "spec", "finalizers")
	if finalizers := append(cur.GetFinalizers(), specFinalizers...); len(finalizers) > 0 {
		return fmt.Sprintf("%s (deleting, waiting for finalizers %s)", d.m, strings.Join(finalizers, ", ")), nil
	}
	return fmt.Sprintf("%s (deleting)", d.m), nil
}
