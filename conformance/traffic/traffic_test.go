package traffic

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// Traffic against a real etcd member yields a history that validates.
func TestTrafficAgainstRealEtcdIsLinearizable(t *testing.T) {
	endpoint := etcdtest.Start(t)
	srv, err := Start(Config{Endpoints: []string{endpoint}, Clients: 3, Keys: 4, Rate: 300, RequestTimeout: 5 * time.Second, KeyPrefix: "test/", FinalReadAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(srv.Handler())
	defer web.Close()

	deadline := time.Now().Add(time.Minute)
	for srv.Recorder().SuccessfulPuts() < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d successful puts within a minute", srv.Recorder().SuccessfulPuts())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Post(web.URL+"/stop", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	h, err := history.Read(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	finals := 0
	for _, op := range h.Operations {
		if op.Final {
			finals++
		}
	}
	if finals != 4 {
		t.Errorf("final reads = %d, want one per key (4)", finals)
	}
	r := validate.Validate(h, validate.Options{Timeout: time.Minute})
	if !r.Passed() {
		t.Fatalf("history of %d operations failed: %q", len(h.Operations), r.Failures)
	}
	if r.Stats.Puts < 40 || r.Stats.LatencyP50 <= 0 {
		t.Errorf("stats = %+v", r.Stats)
	}
}

// Without a reachable etcd every request fails and validation says so.
func TestTrafficWithoutEtcdReportsClientErrors(t *testing.T) {

	srv, err := Start(Config{Endpoints: []string{"http://127.0.0.1:1"}, Clients: 1, Keys: 1, Rate: 50, RequestTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	deadline := time.Now().Add(time.Minute)
	for rec.Len() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no operation recorded within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r := validate.Validate(rec.History(), validate.Options{Timeout: time.Minute})
	if r.Passed() || len(r.Errors) == 0 {
		t.Fatalf("failures = %q, errors = %d; want client-visible errors", r.Failures, len(r.Errors))
	}
}

func TestConfigValidateNamesEveryBadField(t *testing.T) {
	err := Config{}.Validate()
	for _, field := range []string{"endpoints", "clients", "keys", "rate", "request-timeout"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
}
