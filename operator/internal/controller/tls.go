package controller

import (
	"context"
	"crypto/tls"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// The only Secret the operator reads is a TLS cluster's operatorSecret, by
// name, so get alone (the narrowest grant RBAC has for names known only at
// run time). Clusters without client TLS never read one.
// +kubebuilder:rbac:groups="",namespace=etcd-operator-system,resources=secrets,verbs=get

// clientTLS is the operator's client configuration for c's members: nil
// when they serve plain HTTP. The operatorSecret is read with a GET through
// APIReader on every pass, never through the cache: a cached read would
// list and watch every Secret in scope (and need that grant), and a GET
// picks up rotated certificates.
func (r *Reconciler) clientTLS(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*tls.Config, error) {
	if err := c.Spec.TLS.Validate(); err != nil {
		return nil, err
	}
	if !c.Spec.TLS.IsSecureClient() {
		return nil, nil
	}
	name := c.Spec.TLS.Static.OperatorSecret
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("reading spec.TLS.static.operatorSecret %q: %w", name, err)
	}
	for _, key := range []string{desired.OperatorCertFile, desired.OperatorKeyFile, desired.OperatorCAFile} {
		if len(s.Data[key]) == 0 {
			return nil, fmt.Errorf("spec.TLS.static.operatorSecret %q has no key %s (it needs %s, %s and %s)",
				name, key, desired.OperatorCertFile, desired.OperatorKeyFile, desired.OperatorCAFile)
		}
	}
	cfg, err := etcdadmin.ClientTLS(s.Data[desired.OperatorCertFile], s.Data[desired.OperatorKeyFile],
		s.Data[desired.OperatorCAFile], desired.ServerName(c))
	if err != nil {
		return nil, fmt.Errorf("spec.TLS.static.operatorSecret %q: %w", name, err)
	}
	return cfg, nil
}

// podClientURL is the client URL of a member pod by its IP (the member's own
// advertised URL is a DNS name the operator may not resolve).
func podClientURL(c *etcdv1beta2.EtcdCluster, p *corev1.Pod) string {
	return fmt.Sprintf("%s://%s:%d", desired.ClientScheme(c), p.Status.PodIP, desired.ClientPort)
}
