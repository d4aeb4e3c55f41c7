package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clientv3 "go.etcd.io/etcd/client/v3"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// tlsCluster creates coreos' example TLS cluster (edited by edits) of size
// members in a new namespace, run by r on real etcd members, with the
// Secrets named in secrets created first.
func tlsCluster(t *testing.T, r *controller.Reconciler, size int, secrets []string, edits ...func(*etcdv1beta2.EtcdCluster)) *etcdv1beta2.EtcdCluster {
	t.Helper()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	startReconciler(t, cfg, ns, r)
	c := newCluster(ns, "secure", size, "3.5.21")
	withStaticTLS(c)
	for _, edit := range edits {
		edit(c)
	}
	createSecrets(t, tlsSecrets(t, newTestCA(t), ns, c.Name), secrets...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLSCluster runs coreos' example TLS cluster (peer and client TLS) on
// real etcd members, which get the pod's flags and the mounted Secrets'
// files: it bootstraps, every member serves only https with client
// certificates (plain http and a client without a certificate are
// refused), members talk to each other over https, and the operator,
// reaching them with the operatorSecret's certificate, scales it 3→4→3 and
// replaces a dead member, keeping the data.
func TestTLSCluster(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := tlsCluster(t, &controller.Reconciler{}, 3, []string{peerSecret, serverSecret, operatorSecret})
	waitConverged(t, c, 3, false)
	key := putKey(t, c)

	t.Run("https only, with client certificates", func(t *testing.T) {
		pods, endpoints, err := memberEndpoints(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := testClientTLS(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		noCert := ok.Clone()
		noCert.Certificates = nil
		for _, p := range pods {
			if err := memberList(fmt.Sprintf("http://%s:2379", p.Status.PodIP), nil); err == nil {
				t.Errorf("member %s answered plain http", p.Name)
			}
			if err := memberList(testEndpoint(c, p), noCert); err == nil {
				t.Errorf("member %s answered a client without a certificate", p.Name)
			}
			if err := memberList(testEndpoint(c, p), ok); err != nil {
				t.Errorf("member %s refused the operatorSecret's certificate: %v", p.Name, err)
			}
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: ok, DialTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cli.Close() }()
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		members, err := cli.MemberList(callCtx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members.Members {
			for _, u := range append(m.PeerURLs, m.ClientURLs...) {
				if !strings.HasPrefix(u, "https://") {
					t.Errorf("member %s advertises %s, want https", m.Name, u)
				}
			}
		}
	})

	for _, size := range []int{4, 3} {
		patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = size })
		waitConverged(t, c, size, false)
	}
	killPods(t, c, 1)
	waitConverged(t, c, 3, false)
	getKey(t, c, key)
}

// TestTLSClusterRecoversFromASurvivor: a TLS cluster on emptyDir that lost
// quorum for good, opted in, starts again from its survivor's data. The
// seed container copies it over https with the operatorSecret's
// certificate (mounted into it alone); the cluster grows back to three
// members holding a key written before the loss.
func TestTLSClusterRecoversFromASurvivor(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := tlsCluster(t, &controller.Reconciler{SeedImage: "etcdproof/etcd-operator:test"}, 3, []string{peerSecret, serverSecret, operatorSecret})
	waitConverged(t, c, 3, false)
	key := putKey(t, c)
	pods, err := memberPods(ctx, c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	survivor := pods[2] // killPods deletes the first ones
	optIn(t, c)
	killPods(t, c, 2)
	waitConverged(t, c, 3, false)
	getKey(t, c, key)
	pods, err = memberPods(ctx, c.Namespace, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Annotations[desired.AnnotationSeededFrom] == survivor.Name }) {
		t.Fatalf("no member seeded from %s", survivor.Name)
	}
}

// TestPeerTLSOnlyCluster: with member.peerSecret alone (coreos allowed it)
// members talk to each other over https and serve clients plain http; the
// operator reads no Secret.
func TestPeerTLSOnlyCluster(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c := tlsCluster(t, &controller.Reconciler{}, 3, []string{peerSecret}, func(c *etcdv1beta2.EtcdCluster) {
		c.Spec.TLS.Static = &etcdv1beta2.StaticTLS{Member: &etcdv1beta2.MemberSecret{PeerSecret: peerSecret}}
	})
	waitConverged(t, c, 3, false)
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	members, err := cli.MemberList(callCtx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members.Members {
		if len(m.PeerURLs) != 1 || !strings.HasPrefix(m.PeerURLs[0], "https://") || len(m.ClientURLs) != 1 || !strings.HasPrefix(m.ClientURLs[0], "http://") {
			t.Errorf("member %s: peer URLs %v, client URLs %v; want https between members, http for clients", m.Name, m.PeerURLs, m.ClientURLs)
		}
	}
}

// TestCRDChecksTLS: the CRD refuses, with words a user understands, an
// operatorSecret without member.serverSecret and the reverse (coreos'
// Validate), a Secret name that is not one, and any change of spec.TLS once
// the cluster exists; an update that keeps it is accepted.
func TestCRDChecksTLS(t *testing.T) {
	needAPIServer(t)
	if !celRules(t) {
		t.Skip("CEL rules need Kubernetes 1.25+; older API servers store any combination, which the operator refuses (TLSPolicy.Validate)")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := func(name string, edit func(*etcdv1beta2.StaticTLS)) *etcdv1beta2.EtcdCluster {
		c := newCluster(ns, name, 3, "3.5.21")
		c.Spec.Paused = true // the objects only
		withStaticTLS(c)
		if edit != nil {
			edit(c.Spec.TLS.Static)
		}
		return c
	}
	for name, tt := range map[string]struct {
		edit func(*etcdv1beta2.StaticTLS)
		want string
	}{
		"operatorSecret alone":   {func(s *etcdv1beta2.StaticTLS) { s.Member = nil }, "go together"},
		"serverSecret alone":     {func(s *etcdv1beta2.StaticTLS) { s.OperatorSecret = "" }, "go together"},
		"a name that is not one": {func(s *etcdv1beta2.StaticTLS) { s.Member.PeerSecret = "Peer_TLS" }, "spec.TLS.static.member.peerSecret in body should match"},
	} {
		err := k8s.Create(ctx, cluster("bad-"+strings.ReplaceAll(strings.ToLower(name), " ", "-"), tt.edit))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want refused with %q", name, err, tt.want)
		}
	}

	secure := cluster("secure", nil)
	plain := newCluster(ns, "plain", 3, "3.5.21")
	plain.Spec.Paused = true
	for _, c := range []*etcdv1beta2.EtcdCluster{secure, plain} {
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for name, tt := range map[string]struct {
		c    *etcdv1beta2.EtcdCluster
		edit func(*etcdv1beta2.EtcdCluster)
		want string
	}{
		"changed": {secure, func(c *etcdv1beta2.EtcdCluster) { c.Spec.TLS.Static.Member.PeerSecret = "other" }, "spec.TLS cannot be changed"},
		"removed": {secure, func(c *etcdv1beta2.EtcdCluster) { c.Spec.TLS = nil }, "spec.TLS cannot be added to or removed"},
		"added":   {plain, withStaticTLS, "spec.TLS cannot be added to or removed"},
		"kept":    {secure, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 5 }, ""},
	} {
		c := tt.c.DeepCopy()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
			t.Fatal(err)
		}
		tt.edit(c)
		err := k8s.Update(ctx, c)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want refused with %q", name, err, tt.want)
		}
	}
}

// memberList asks endpoint for the member list over one connection.
func memberList(endpoint string, tlsConfig *tls.Config) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: time.Second})
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = cli.MemberList(ctx)
	return err
}

// TestTLSClusterWaitsForItsOperatorSecret runs the operator with the
// generated Role, whose only grant on Secrets is get. While it cannot read
// the operatorSecret (missing, or the get refused) it cannot reach the
// members, so it changes nothing (no member pod is created) and says why in
// the Available condition, status.reason and a Warning Event; once the
// Secret is there, the cluster comes up.
func TestTLSClusterWaitsForItsOperatorSecret(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	start := func(t *testing.T, edits ...func(*rbacv1.Role)) (*etcdv1beta2.EtcdCluster, map[string]*corev1.Secret) {
		ns := newNamespace(t)
		runEtcdKubelet(t, ns)
		startOperatorAs(t, asGeneratedRole(t, ns, edits...), ns, nil, plan.Options{})
		c := newCluster(ns, "secure", 3, "3.5.21")
		withStaticTLS(c)
		secrets := tlsSecrets(t, newTestCA(t), ns, c.Name)
		createSecrets(t, secrets, peerSecret, serverSecret)
		return c, secrets
	}
	waitUnavailable := func(t *testing.T, c *etcdv1beta2.EtcdCluster, why string) {
		t.Helper()
		var message string
		waitFor(t, "Available=False, ClientTLSUnavailable, saying "+why, func() error {
			var got etcdv1beta2.EtcdCluster
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
				return err
			}
			available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
			if available == nil || available.Reason != conditions.ReasonClientTLSUnavailable ||
				!strings.Contains(available.Message, `operatorSecret "`+operatorSecret+`"`) || !strings.Contains(available.Message, why) ||
				got.Status.Reason != available.Message {
				return fmt.Errorf("Available %+v, reason %q", available, got.Status.Reason)
			}
			message = available.Message
			return nil
		})
		t.Logf("Available: %s", message)
		if eventsRecorded(t) {
			waitFor(t, "Event "+conditions.EventClientTLSUnavailable, func() error {
				seen, err := eventReasons(ctx, c.Namespace)
				if err == nil && !seen[conditions.EventClientTLSUnavailable] {
					err = fmt.Errorf("events %v", seen)
				}
				return err
			})
		}
		if pods, err := memberPods(ctx, c.Namespace, c.Name); err != nil || len(pods) > 0 {
			t.Fatalf("member pods %d (%v) while the operator cannot reach them, want none", len(pods), err)
		}
	}

	t.Run("missing, then created", func(t *testing.T) {
		c, secrets := start(t)
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		waitUnavailable(t, c, "not found")
		createSecrets(t, secrets, operatorSecret)
		waitConverged(t, c, 3, false)
	})

	t.Run("get forbidden", func(t *testing.T) {
		c, secrets := start(t, func(role *rbacv1.Role) {
			role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "secrets") })
		})
		createSecrets(t, secrets, operatorSecret)
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		waitUnavailable(t, c, "forbidden")
	})
}
