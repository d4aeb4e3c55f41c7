package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// memberPodRefused: the API server refuses the objects of a new member (a
// server-side dry run), so no learner was added.
type memberPodRefused struct {
	err error
}

func (e *memberPodRefused) Error() string { return e.err.Error() }
func (e *memberPodRefused) Unwrap() error { return e.err }

// checkMemberObjects creates member m's claim (if any) and pod as a
// server-side dry run: every admission step runs (ResourceQuota,
// LimitRange, PodSecurity, admission webhooks, the API's own validation)
// and nothing is stored. A refusal is a *memberPodRefused; an error that
// may pass (a timeout, an API server that is down) is returned as it is.
//
// A dry run is the create verb: a Role that allows creating pods and claims
// (coreos' does) allows it. It is skipped where the API server has none
// (before Kubernetes 1.13: r.NoDryRun), or where an admission webhook
// declares side effects and so refuses dry runs: the member is then added
// as before, and a refused pod is found out after.
func (r *Reconciler) checkMemberObjects(ctx context.Context, c *etcdv1beta2.EtcdCluster, m desired.Member) error {
	if r.NoDryRun != "" {
		return nil
	}
	var objects []client.Object
	if pvc := desired.MemberPVC(c, m.Name); pvc != nil {
		objects = append(objects, pvc)
	}
	objects = append(objects, desired.MemberPod(c, m, r.Unsafe))
	for _, obj := range objects {
		err := r.Client.Create(ctx, obj, client.DryRunAll)
		switch {
		case err == nil:
		case dryRunUnsupported(err):
			r.warnOnce(ctx, "dry run unsupported "+c.Namespace, "a new member's pod could not be checked with a dry run; members are added unchecked",
				"namespace", c.Namespace, "error", err.Error())
			return nil
		case refusal(err):
			return &memberPodRefused{err}
		default:
			return fmt.Errorf("checking %s %s with a dry run: %w", memberObjectKind(obj), obj.GetName(), err)
		}
	}
	return nil
}

// memberObjectKind names a member's object in messages.
func memberObjectKind(obj client.Object) string {
	if _, ok := obj.(*corev1.PersistentVolumeClaim); ok {
		return "claim"
	}
	return "pod"
}

// dryRunUnsupported: the API server cannot do this dry run (an admission
// webhook with side effects, or a dry-run feature switched off).
func dryRunUnsupported(err error) bool {
	msg := strings.ToLower(err.Error())
	return apierrors.IsBadRequest(err) && (strings.Contains(msg, "dry run") || strings.Contains(msg, "dryrun"))
}

// refusal: the API server answered, and refuses the object: quota,
// policy, a webhook's denial, a spec it rejects, or a grant that lacks the
// create verb. Other errors (timeouts, unavailable) may pass by themselves.
func refusal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}
