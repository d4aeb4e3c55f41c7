package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// ensureServices creates the peer and client Services when missing. An
// existing Service is left as it is (coreos tolerated pre-created ones too),
// but one with no controller and the cluster's labels is adopted: it is the
// cluster's own, orphaned (--cascade=orphan), and must go when it goes.
func (r *Reconciler) ensureServices(ctx context.Context, c *etcdv1beta2.EtcdCluster) error {
	for _, svc := range []*corev1.Service{desired.PeerService(c), desired.ClientService(c)} {
		var existing corev1.Service
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(svc), &existing)
		if err == nil {
			if metav1.GetControllerOf(&existing) == nil && labels.SelectorFromSet(desired.Selector(c.Name)).Matches(labels.Set(existing.Labels)) {
				if err := r.setController(ctx, c, &existing); err != nil {
					return fmt.Errorf("adopting Service %s: %w", svc.Name, err)
				}
			}
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Service %s: %w", svc.Name, err)
		}
		if err := r.Client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Service %s: %w", svc.Name, err)
		}
	}
	return nil
}
