package framework

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/inventory"
)

// Against a real kube-apiserver: a profile with cluster.tls gets its three
// Secrets before the CR, and the cleanup check's judgement of the
// cluster's namespace counts them as the run's, not as the operator's
// leftovers; once the CR is gone the suite deletes them.
func TestTLSSecretsAreTheRunsOnARealAPIServer(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	// coreos' install (CRD, namespace) with the TLS of reference-tls.yaml.
	p := loadProfile(t, "../profiles/coreos-v0.9.4.yaml")
	p.Cluster.TLS = loadProfile(t, "../profiles/reference-tls.yaml").Cluster.TLS
	ctx := context.Background()
	e := envOnAPIServer(t, p)
	if err := e.RunSteps(ctx, p.Install); err != nil {
		t.Fatal(err)
	}
	ns := p.ClusterNamespace("unused")
	before, err := inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, ns)
	if err != nil {
		t.Fatal(err)
	}

	ec, err := e.CreateCluster(ctx, ClusterSpec{Namespace: ns, Name: "demo", Size: 3, Version: "3.5.21"})
	if err != nil {
		t.Fatal(err)
	}
	if !ec.TLS() || !strings.HasPrefix(ec.ClientEndpoint(), "https://demo-client."+ns+".svc:") {
		t.Errorf("TLS() = %v, client endpoint %s; want TLS and https", ec.TLS(), ec.ClientEndpoint())
	}
	cr, err := ec.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo-peer-tls", "demo-server-tls", "demo-client-tls"} {
		s, err := e.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("TLS Secret %s: %v", name, err)
		}
		// Made before the CR: the operator may look for them at once.
		if s.CreationTimestamp.After(cr.GetCreationTimestamp().Time) {
			t.Errorf("Secret %s was created after the CR", name)
		}
	}

	if err := ec.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := inventory.TakeNamespace(ctx, e.Disc, e.Dynamic, ns)
	if err != nil {
		t.Fatal(err)
	}
	rules := inventory.Rules{Exclusions: inventory.DefaultExclusions}
	if v := inventory.InNamespace(before, after, ec.RunCreatedUIDs(), rules); !v.Clean() {
		t.Errorf("the run's own objects judged as leftovers: %+v", v)
	}
	// Without their UIDs the Secrets would be leftovers: the judgement
	// above passed because they are known, not because they were missed.
	left := map[string]bool{}
	for _, f := range inventory.InNamespace(before, after, ec.ExtraUIDs, rules).Leftovers {
		left[f.Name] = true
	}
	if !left["demo-peer-tls"] || !left["demo-server-tls"] || !left["demo-client-tls"] {
		t.Errorf("leftovers without the Secrets' UIDs = %v, want the three Secrets", left)
	}

	if err := ec.DeleteTLSSecrets(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := e.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "etcdproof.io/suite=true"})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("suite Secrets after DeleteTLSSecrets: %v, %v", list, err)
	}
}
