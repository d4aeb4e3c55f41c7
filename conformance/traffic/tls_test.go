package traffic

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/internal/tlsgen"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// Traffic against a member that requires client certificates (coreos'
// static TLS) gets through with the client certificate, and its history
// validates like any other.
func TestTrafficSpeaksTLSToAMemberThatRequiresIt(t *testing.T) {
	ca, err := tlsgen.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ca.IssueCoreosCluster("c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := etcdtest.StartTLS(t, etcdtest.TLSFiles{CertPEM: certs.Server.CertPEM, KeyPEM: certs.Server.KeyPEM, ClientCAPEM: certs.CAPEM})
	cfg := testConfig(endpoint)
	if cfg.TLS, err = certs.ClientTLS(); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, rec) }()
	waitFor(t, "20 successful puts over TLS", func() bool { return rec.SuccessfulPuts() >= 20 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := validate.Validate(rec.History(), validate.Options{Timeout: time.Minute}); !r.Passed() {
		t.Fatalf("history failed: %q", r.Failures)
	}
}

// clientv3 dials an http:// endpoint in plain text whatever its TLS
// settings: with TLS on, such an endpoint is a mistake, said up front.
func TestTLSWithAnHTTPEndpointIsRefused(t *testing.T) {
	cfg := testConfig("http://demo-client.ns.svc:2379")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("plain traffic: %v", err)
	}
	ca, err := tlsgen.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ca.IssueCoreosCluster("c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS, err = certs.ClientTLS(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "http://demo-client.ns.svc:2379 is http://") {
		t.Errorf("error = %v", err)
	}
}
