package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// What a refused write was for; the keys of a cluster's refusals.
const (
	writeServices         = "services"
	writeDisruptionBudget = "disruption budget"
	writeMembers          = "member change"
	writeVoterLabels      = "voter labels"
	writeTolerations      = "member tolerations"
)

// refusals remembers, per cluster, the writes the API server refused, so the
// Authorized condition keeps saying so until the same kind of write works.
type refusals struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]string
}

func (f *refusals) set(key types.NamespacedName, what, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.NamespacedName]map[string]string{}
	}
	if f.m[key] == nil {
		f.m[key] = map[string]string{}
	}
	f.m[key][what] = message
}

func (f *refusals) clear(key types.NamespacedName, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m[key], what)
}

func (f *refusals) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// list returns "<what>: <message>" for each refusal, sorted.
func (f *refusals) list(key types.NamespacedName) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for what, msg := range f.m[key] {
		out = append(out, what+": "+msg)
	}
	slices.Sort(out)
	return out
}

// refuse records a refused write of cluster key and logs it once per cause,
// not once per pass: the pass goes on and the next one would say it again.
func (r *Reconciler) refuse(ctx context.Context, key types.NamespacedName, what string, err error) {
	r.refused.set(key, what, err.Error())
	r.warnOnce(ctx, forbiddenCause(what, key.Namespace, err), "write refused; the operator goes on without it",
		"what", what, "namespace", key.Namespace, "error", err.Error())
}

// warnOnce logs msg the first time cause is seen.
func (r *Reconciler) warnOnce(ctx context.Context, cause, msg string, keysAndValues ...any) {
	if _, seen := r.warned.LoadOrStore(cause, true); !seen {
		log.FromContext(ctx).Info(msg, keysAndValues...)
	}
}

// forbiddenCause names a refusal by what was refused where, not by the
// object's name, so each new pod's refusal is not a new cause.
func forbiddenCause(what, namespace string, err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		d := status.Status().Details
		return fmt.Sprintf("%s %s/%s in %q: %s", what, d.Group, d.Kind, namespace, status.Status().Reason)
	}
	return fmt.Sprintf("%s in %q: %T", what, namespace, err)
}
