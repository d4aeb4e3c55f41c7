package framework

import (
	"context"
	"crypto/tls"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/internal/tlsgen"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// tlsMember starts an etcd member as coreos' static TLS runs one (server
// certificate, client certificates required), issued for cluster c in
// namespace ns, and returns its port on 127.0.0.1 and the certificates.
func tlsMember(t *testing.T) (int, tlsgen.ClusterCerts) {
	t.Helper()
	ca, err := tlsgen.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ca.IssueCoreosCluster("c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(etcdtest.StartTLS(t, etcdtest.TLSFiles{CertPEM: certs.Server.CertPEM, KeyPEM: certs.Server.KeyPEM, ClientCAPEM: certs.CAPEM}))
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port, certs
}

// put writes through cfg, with a short deadline: a refused client fails
// rather than retrying for long.
func put(t *testing.T, cfg clientv3.Config) error {
	t.Helper()
	cli, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = cli.Put(ctx, "k", "v")
	return err
}

// The suite's one client configuration reaches a member that requires
// client certificates, as the port-forwards do (127.0.0.1): it puts and
// gets, and Status and HashKV (which ground truth sends to the endpoint
// itself) answer. A client without the certificate, with a certificate
// of another CA, or in plain text is refused.
func TestClientConfigSpeaksTLSToAMemberThatRequiresClientCertificates(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	port, certs := tlsMember(t)
	client, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	c := &EtcdCluster{tls: &clusterTLS{client: client}}
	cfg := c.ClientConfig(port)
	if cfg.TLS == nil || !strings.HasPrefix(cfg.Endpoints[0], "https://127.0.0.1:") {
		t.Fatalf("config = %v with TLS %v, want an https endpoint on 127.0.0.1 and TLS", cfg.Endpoints, cfg.TLS)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "etcdproof/marker", "tls"); err != nil {
		t.Fatalf("put with the client certificate: %v", err)
	}
	got, err := cli.Get(ctx, "etcdproof/marker")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "tls" {
		t.Fatalf("get = %v, %v", got, err)
	}
	st, err := cli.Status(ctx, cli.Endpoints()[0])
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if _, err := cli.HashKV(ctx, cli.Endpoints()[0], st.Header.Revision); err != nil {
		t.Fatalf("hashkv: %v", err)
	}

	other, err := tlsgen.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.IssueCoreosCluster("c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	foreignClient, err := tlsgen.ClientTLS(foreign.Client, certs.CAPEM)
	if err != nil {
		t.Fatal(err)
	}
	noCert := client.Clone()
	noCert.Certificates = nil
	for name, refused := range map[string]clientv3.Config{
		"no client certificate":              {Endpoints: cfg.Endpoints, TLS: noCert, Logger: zap.NewNop()},
		"a client certificate of another CA": {Endpoints: cfg.Endpoints, TLS: foreignClient, Logger: zap.NewNop()},
		"plain text (no cluster.tls)":        (&EtcdCluster{}).ClientConfig(port),
	} {
		// The same member took the put above: only the client differs.
		if err := put(t, refused); err == nil {
			t.Errorf("%s: the member accepted a put", name)
		}
	}
}

// Without cluster.tls the configuration is the plain one it always was,
// and reaches a plain member.
func TestClientConfigWithoutTLSIsPlain(t *testing.T) {
	u, err := url.Parse(etcdtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	cfg := (&EtcdCluster{}).ClientConfig(port)
	if cfg.TLS != nil || !slices.Equal(cfg.Endpoints, []string{"127.0.0.1:" + u.Port()}) || cfg.DialTimeout != probeTimeout {
		t.Errorf("config = %v, TLS %v, dial timeout %s", cfg.Endpoints, cfg.TLS, cfg.DialTimeout)
	}
	if err := put(t, cfg); err != nil {
		t.Errorf("put: %v", err)
	}
}

func tlsProfile() *profile.Profile {
	return &profile.Profile{Name: "tls", Cluster: profile.Cluster{
		ClientService: "{{ .Name }}-client", ClientPort: 2379,
		TLS: &profile.TLS{Format: profile.TLSCoreosStatic, PeerSecret: "{{ .Name }}-peer-tls", ServerSecret: "{{ .Name }}-server-tls", ClientSecret: "{{ .Name }}-client-tls"},
	}}
}

// Before a TLS cluster, the suite creates its three Secrets with coreos'
// key names, one CA for the run, labelled as the suite's; they go again
// when asked, and a second delete is no error.
func TestTLSSecretsAreCreatedWithCoreosKeysAndDeleted(t *testing.T) {
	kube := fake.NewClientset()
	e := &Env{Kube: kube, Profile: tlsProfile()}
	ctx := context.Background()
	ct, err := e.createTLSSecrets(ctx, "demo", "ns1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"demo-peer-tls":   {"peer-ca.crt", "peer.crt", "peer.key"},
		"demo-server-tls": {"server-ca.crt", "server.crt", "server.key"},
		"demo-client-tls": {"etcd-client-ca.crt", "etcd-client.crt", "etcd-client.key"},
	}
	var ca []byte
	for name, keys := range want {
		s, err := kube.CoreV1().Secrets("ns1").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Secret %s: %v", name, err)
		}
		var got []string
		for k := range s.Data {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, keys) {
			t.Errorf("Secret %s has keys %v, want %v", name, got, keys)
		}
		if s.Labels["etcdproof.io/suite"] != "true" {
			t.Errorf("Secret %s labels = %v", name, s.Labels)
		}
		if ca == nil {
			ca = s.Data[keys[0]]
		} else if string(s.Data[keys[0]]) != string(ca) {
			t.Errorf("Secret %s holds another CA", name)
		}
	}
	if ct.client == nil || len(ct.client.Certificates) != 1 || ct.client.RootCAs == nil {
		t.Errorf("client TLS = %+v, want the client certificate and the CA", ct.client)
	}
	if first, _ := e.tlsCA(); first != e.ca {
		t.Error("the run's CA was made again")
	}

	c := &EtcdCluster{env: e, Name: "demo", Namespace: "ns1", tls: ct}
	for range 2 {
		if err := c.DeleteTLSSecrets(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := kube.CoreV1().Secrets("ns1").List(ctx, metav1.ListOptions{}); len(left.Items) != 0 {
		t.Errorf("%d Secrets left", len(left.Items))
	}
}

// The traffic pod of a TLS cluster dials the client Service over https
// with the client Secret mounted read-only and passed as etcdctl's flags;
// its security context (Pod Security "restricted") is unchanged.
func TestTrafficPodOfATLSClusterMountsTheClientSecret(t *testing.T) {
	kube := fake.NewClientset()
	p := tlsProfile()
	e := &Env{Kube: kube, Profile: p, Config: &profile.Config{Traffic: profile.TrafficConfig{Clients: 1, Keys: 1, RatePerSecond: 1, RequestTimeout: "5s"}}}
	ctx := context.Background()
	for _, withTLS := range []bool{false, true} {
		c := &EtcdCluster{env: e, Name: "demo", Namespace: "ns1"}
		if withTLS {
			c.tls = &clusterTLS{secrets: profile.TLSSecrets{Client: "demo-client-tls"}, client: &tls.Config{}}
		}
		tp, err := c.StartTraffic(ctx, "step-"+strconv.FormatBool(withTLS))
		if err != nil {
			t.Fatal(err)
		}
		pod, err := kube.CoreV1().Pods("ns1").Get(ctx, tp.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ct := pod.Spec.Containers[0]
		args := strings.Join(ct.Args, " ")
		if !withTLS {
			if !strings.Contains(args, "--endpoints http://demo-client.ns1.svc:2379") || strings.Contains(args, "--cert") || len(pod.Spec.Volumes) > 0 {
				t.Errorf("plain traffic pod: args %q, volumes %v", args, pod.Spec.Volumes)
			}
			continue
		}
		for _, want := range []string{
			"--endpoints https://demo-client.ns1.svc:2379",
			"--cert /etc/etcdproof/client-tls/etcd-client.crt",
			"--key /etc/etcdproof/client-tls/etcd-client.key",
			"--cacert /etc/etcdproof/client-tls/etcd-client-ca.crt",
		} {
			if !strings.Contains(args, want) {
				t.Errorf("args %q lack %q", args, want)
			}
		}
		if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Secret == nil || pod.Spec.Volumes[0].Secret.SecretName != "demo-client-tls" {
			t.Errorf("volumes = %+v, want the client Secret", pod.Spec.Volumes)
		}
		if len(ct.VolumeMounts) != 1 || !ct.VolumeMounts[0].ReadOnly || ct.VolumeMounts[0].MountPath != "/etc/etcdproof/client-tls" {
			t.Errorf("mounts = %+v", ct.VolumeMounts)
		}
		sc := ct.SecurityContext
		if sc == nil || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
			!*pod.Spec.SecurityContext.RunAsNonRoot || pod.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("security context changed: %+v / %+v", sc, pod.Spec.SecurityContext)
		}
	}
}
