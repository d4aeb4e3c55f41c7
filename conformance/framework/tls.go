package framework

// TLS for profiles with cluster.tls: the run's CA, each cluster's
// certificates in the Secrets the profile names, and the one client
// configuration every etcd client of the suite is built from.

import (
	"context"
	"crypto/tls"
	"fmt"
	"path"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/etcdproof/etcdproof/conformance/internal/tlsgen"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// suiteLabels mark what the suite creates (namespaces, TLS Secrets), for
// whoever looks at a cluster; the cleanup check tells the suite's objects
// apart by UID and the audit log, not by them.
func suiteLabels() map[string]string { return map[string]string{"etcdproof.io/suite": "true"} }

// clusterTLS is what the suite made for one TLS cluster.
type clusterTLS struct {
	secrets profile.TLSSecrets
	// client presents the client Secret's certificate and trusts only the
	// run's CA.
	client *tls.Config
	// uids are the Secrets' UIDs: the run's objects, not the operator's.
	uids []string
}

// tlsCA is the run's CA, made on first use: every TLS cluster of the run
// is signed by it.
func (e *Env) tlsCA() (*tlsgen.CA, error) {
	e.caMu.Lock()
	defer e.caMu.Unlock()
	if e.ca == nil {
		ca, err := tlsgen.NewCA("etcdproof run CA")
		if err != nil {
			return nil, fmt.Errorf("make the run's CA: %w", err)
		}
		e.ca = ca
	}
	return e.ca, nil
}

// createTLSSecrets issues a cluster's certificates and creates the
// profile's three Secrets for it, before its CR: the operator mounts
// them as soon as it sees the cluster.
func (e *Env) createTLSSecrets(ctx context.Context, cluster, namespace string) (*clusterTLS, error) {
	names, err := e.Profile.TLSSecrets(cluster, namespace)
	if err != nil {
		return nil, err
	}
	ca, err := e.tlsCA()
	if err != nil {
		return nil, err
	}
	certs, err := ca.IssueCoreosCluster(cluster, namespace)
	if err != nil {
		return nil, fmt.Errorf("issue the certificates of %s/%s: %w", namespace, cluster, err)
	}
	client, err := certs.ClientTLS()
	if err != nil {
		return nil, err
	}
	out := &clusterTLS{secrets: names, client: client}
	for _, s := range []struct {
		name string
		data map[string][]byte
	}{
		{names.Peer, certs.PeerSecretData()},
		{names.Server, certs.ServerSecretData()},
		{names.Client, certs.ClientSecretData()},
	} {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: namespace, Labels: suiteLabels()},
			Type:       corev1.SecretTypeOpaque,
			Data:       s.data,
		}
		created, err := e.Kube.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("TLS Secret %s/%s: %w", namespace, s.name, err)
		}
		out.uids = append(out.uids, string(created.UID))
	}
	return out, nil
}

// TLS reports whether the suite speaks TLS to the cluster.
func (c *EtcdCluster) TLS() bool { return c.tls != nil }

// DeleteTLSSecrets deletes the Secrets the suite made for the cluster, once
// its CR is gone, so that none outlives the run where the cluster's
// namespace stays (cluster.namespace: operator). Missing ones are fine.
func (c *EtcdCluster) DeleteTLSSecrets(ctx context.Context) error {
	if c.tls == nil {
		return nil
	}
	for _, name := range []string{c.tls.secrets.Peer, c.tls.secrets.Server, c.tls.secrets.Client} {
		err := c.env.Kube.CoreV1().Secrets(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete TLS Secret %s/%s: %w", c.Namespace, name, err)
		}
	}
	return nil
}

// ClientConfig is the configuration of every etcd client the suite opens
// on a member through a port-forward to localPort: plain, or with TLS an
// https endpoint, the client certificate and the run's CA as the only root
// (the server certificates name 127.0.0.1 for this). Call sites never
// build their own, so no probe can forget TLS.
func (c *EtcdCluster) ClientConfig(localPort int) clientv3.Config {
	cfg := clientv3.Config{
		Endpoints:   []string{fmt.Sprintf("127.0.0.1:%d", localPort)},
		DialTimeout: probeTimeout,
		Logger:      zap.NewNop(),
	}
	if c.tls != nil {
		cfg.Endpoints = []string{fmt.Sprintf("https://127.0.0.1:%d", localPort)}
		cfg.TLS = c.tls.client.Clone()
	}
	return cfg
}

// trafficTLSDir is where the traffic pod mounts the client Secret.
const trafficTLSDir = "/etc/etcdproof/client-tls"

// withClientTLS has the traffic pod dial with the client Secret: mounted
// read-only (a Secret volume is allowed under Pod Security "restricted"),
// its files passed as etcdctl's --cert, --key and --cacert. The files are
// readable by all (0444): the pod runs as a non-root user with no fsGroup.
func withClientTLS(pod *corev1.Pod, clientSecret string) {
	const volume = "client-tls"
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: clientSecret, DefaultMode: ptr.To(int32(0o444))},
	}})
	ct := &pod.Spec.Containers[0]
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: trafficTLSDir, ReadOnly: true})
	ct.Args = append(ct.Args,
		"--cert", path.Join(trafficTLSDir, tlsgen.ClientCertKey),
		"--key", path.Join(trafficTLSDir, tlsgen.ClientKeyKey),
		"--cacert", path.Join(trafficTLSDir, tlsgen.ClientCAKey),
	)
}
