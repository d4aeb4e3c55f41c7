package kubecompat

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Access answers what the operator may do and what the API server serves, so
// the operator can fit itself to the grant it was installed with (coreos'
// Role, say) instead of failing on its first refused write.
type Access struct {
	client    kubernetes.Interface
	discovery discovery.DiscoveryInterface
}

// NewAccess builds an Access for the operator's own credentials.
func NewAccess(cfg *rest.Config) (*Access, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Access{client: cs, discovery: cs.Discovery()}, nil
}

// Served reports whether the API server serves groupVersion ("events.k8s.io/v1").
func (a *Access) Served(groupVersion string) (bool, error) {
	_, err := a.discovery.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// ServesResource reports whether the API server serves resource (plural,
// "etcdrestores") in groupVersion: a CRD that is not installed is not.
func (a *Access) ServesResource(groupVersion, resource string) (bool, error) {
	list, err := a.discovery.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// Allowed asks the API server (a SelfSubjectAccessReview, which every
// authenticated user may create) whether the operator may do each verb on
// resource ("leases", "etcdclusters/status") of group in namespace ("" for
// every namespace). It answers false with the first verb refused. Where even
// the review is refused (a cluster without the default system:basic-user
// binding) it cannot tell, and answers true: the operator then behaves as it
// would with its own Role.
func (a *Access) Allowed(ctx context.Context, group, resource, namespace string, verbs ...string) (bool, string, error) {
	res, sub, _ := strings.Cut(resource, "/")
	for _, verb := range verbs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: group, Resource: res, Subresource: sub,
			},
		}}
		got, err := a.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", fmt.Errorf("asking whether %s on %s is allowed: %w", verb, resource, err)
		}
		if !got.Status.Allowed {
			return false, verb, nil
		}
	}
	return true, "", nil
}

// EventsAPI is the API the operator records Events with.
type EventsAPI string

// The choices, best first.
const (
	EventsV1   EventsAPI = "events.k8s.io/v1"
	CoreEvents EventsAPI = "v1"
	NoEvents   EventsAPI = ""
)

// ChooseEvents picks events.k8s.io/v1 where it is served and the operator may
// create Events there (Kubernetes 1.19+ with the operator's own Role), else
// core/v1 Events where allowed (coreos' Role; 1.16-era clusters), else none.
// why says why the first choice was not taken ("" when it was).
func (a *Access) ChooseEvents(ctx context.Context, namespace string) (api EventsAPI, why string, err error) {
	served, err := a.Served(eventsv1.SchemeGroupVersion.String())
	if err != nil {
		return NoEvents, "", fmt.Errorf("discovering the events API: %w", err)
	}
	if served {
		ok, _, err := a.Allowed(ctx, eventsv1.GroupName, "events", namespace, "create")
		if err != nil {
			return NoEvents, "", err
		}
		if ok {
			return EventsV1, "", nil
		}
		why = "creating events.k8s.io Events is not allowed"
	} else {
		why = "events.k8s.io/v1 is not served (Kubernetes older than 1.19)"
	}
	ok, _, err := a.Allowed(ctx, "", "events", namespace, "create")
	if err != nil {
		return NoEvents, "", err
	}
	if ok {
		return CoreEvents, why, nil
	}
	return NoEvents, why + ", and creating core/v1 Events is not allowed", nil
}

// LeasesAllowed reports whether leader election can hold a Lease in
// namespace: it needs get, create and update on leases.
func (a *Access) LeasesAllowed(ctx context.Context, namespace string) (bool, error) {
	ok, _, err := a.Allowed(ctx, coordinationv1.GroupName, "leases", namespace, "get", "create", "update")
	return ok, err
}
