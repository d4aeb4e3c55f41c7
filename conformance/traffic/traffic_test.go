package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/raft/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

func testConfig(endpoints ...string) Config {
	return Config{Endpoints: endpoints, Clients: 3, Keys: 4, Rate: 300, RequestTimeout: 5 * time.Second,
		KeyPrefix: "test/", RetryBackoff: 50 * time.Millisecond, FinalReadBudget: 10 * time.Second}
}

// waitFor polls cond every 20 ms for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Traffic against a real etcd member yields a history that validates.
func TestTrafficAgainstRealEtcdIsLinearizable(t *testing.T) {
	endpoint := etcdtest.Start(t)
	before := time.Now()
	srv, err := Start(testConfig(endpoint))
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(srv.Handler())
	defer web.Close()

	waitFor(t, "40 successful puts", func() bool { return srv.Recorder().SuccessfulPuts() >= 40 })
	// The suite places the cluster's events on the history's axis from
	// the wall-clock time of its zero.
	st := getStatus(t, web.URL)
	if st.StartedAt.Before(before.Round(0)) || st.StartedAt.After(time.Now()) || st.SuccessfulPuts < 40 {
		t.Errorf("status = %+v, want startedAt between %s and now", st, before)
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

func getStatus(t *testing.T, url string) Status {
	t.Helper()
	resp, err := http.Get(url + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var st Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The leader of a 3-member cluster crashes mid-traffic sent to a follower:
// requests fail while a new leader is elected, yet the history stays
// linearizable, is decided in time, and every written key is read back.
func TestTrafficThroughLeaderLoss(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	leader := c.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	srv, err := Start(testConfig(c.Endpoints[(leader+1)%3]))
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	waitFor(t, "20 successful puts", func() bool { return rec.SuccessfulPuts() >= 20 })
	c.Crash(leader)
	before := rec.SuccessfulPuts()
	waitFor(t, "40 more successful puts after the leader stopped", func() bool { return rec.SuccessfulPuts() >= before+40 })
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	// Each answer carries its raft term, and the new leader's is higher:
	// that is how validation tells a leader change apart.
	var first, last uint64
	for _, op := range h.Operations {
		if !op.Succeeded() || op.Final {
			continue
		}
		if op.Term == 0 {
			t.Fatalf("successful %s at %d has no raft term", op.Kind, op.Return)
		}
		if first == 0 {
			first = op.Term
		}
		last = op.Term
	}
	if last <= first {
		t.Errorf("raft term went from %d to %d across the leader's crash, want it higher", first, last)
	}
	r := validate.Validate(h, validate.Options{Timeout: time.Minute, ClientErrors: validate.AllowClientErrors})
	if !r.Passed() || r.Linearizability != validate.Linearizable {
		t.Fatalf("history of %d operations: %s, failures %q", len(h.Operations), r.Linearizability, r.Failures)
	}
	t.Logf("stats: %+v", r.Stats)
	for _, e := range r.Errors {
		t.Log(e)
	}
}

// Without a reachable etcd no request leaves the client: every failure is
// definite and retried once, and validation says so.
func TestTrafficWithoutEtcdReportsDefiniteErrors(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1")
	cfg.Clients, cfg.Keys, cfg.Rate, cfg.RequestTimeout, cfg.FinalReadBudget = 1, 1, 50, 200*time.Millisecond, time.Second
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	waitFor(t, "4 operations", func() bool { return rec.Len() >= 4 })
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	retries := 0
	for _, op := range h.Operations {
		if op.Class() != history.Definite {
			t.Errorf("%+v: want a definite failure", op)
		}
		if op.Retry {
			retries++
		}
	}
	if retries == 0 {
		t.Error("no definite failure was retried")
	}
	r := validate.Validate(h, validate.Options{Timeout: time.Minute, ClientErrors: validate.NoErrorsAfterRetry})
	if r.Passed() || len(r.Errors) == 0 || r.Stats.DefiniteFailures == 0 || r.Stats.FailuresAfterRetry == 0 {
		t.Fatalf("failures = %q, stats %+v; want definite client-visible errors", r.Failures, r.Stats)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		err  error
		sent bool
		want history.ErrorClass
	}{
		{"never sent, whatever the error", context.DeadlineExceeded, false, history.Definite},
		{"deadline after sending", context.DeadlineExceeded, true, history.Indeterminate},
		{"etcd timed out", rpctypes.ErrTimeout, true, history.Indeterminate},
		{"connection lost after sending", rpctypes.ErrTimeoutDueToConnectionLost, true, history.Indeterminate},
		{"server stopped", rpctypes.ErrStopped, true, history.Indeterminate},
		{"no leader", rpctypes.ErrNoLeader, true, history.Definite},
		{"too many requests", rpctypes.ErrTooManyRequests, true, history.Definite},
		{"no space", rpctypes.ErrNoSpace, true, history.Definite},
		{"learner", rpctypes.Error(rpctypes.ErrGRPCNotSupportedForLearner), true, history.Definite},
		{"proposal dropped", status.Error(codes.Unknown, raft.ErrProposalDropped.Error()), true, history.Definite},
		{"wrapped", fmt.Errorf("put: %w", rpctypes.ErrTooManyRequests), true, history.Definite},
		{"unknown", errors.New("something else"), true, history.Indeterminate},
		{"unavailable", status.Error(codes.Unavailable, "transport is closing"), true, history.Indeterminate},
	}
	for _, tc := range cases {
		if got := classify(tc.err, tc.sent); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestConfigValidateNamesEveryBadField(t *testing.T) {
	err := Config{RetryBackoff: -time.Second, Watchers: -1, WatchResumeEvery: -time.Second}.Validate()
	for _, field := range []string{"endpoints", "clients", "keys", "rate", "request-timeout", "retry-backoff", "final-read-budget", "watchers", "watch-resume-every"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
}
