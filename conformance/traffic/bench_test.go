package traffic

import (
	"fmt"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// BenchmarkTrafficThreeMembers measures what the traffic client sustains
// against a 3-member cluster with no rate limit, to size the suite's
// traffic.ratePerSecond: ops/s is the throughput, validate-ms the time
// the history took to check. With watchers, events/s is what they
// received, and ops/s beside the same run without them is their cost.
//
//	go test ./conformance/traffic -run '^$' -bench ThreeMembers -benchtime 3000x
func BenchmarkTrafficThreeMembers(b *testing.B) {
	c := etcdtest.StartCluster(b, 3)
	for _, clients := range []int{1, 4, 8, 16} {
		for _, watchers := range []int{0, 2} {
			b.Run(fmt.Sprintf("clients=%d/watchers=%d", clients, watchers), func(b *testing.B) {
				// Keys of their own: with -count, a run would otherwise read
				// what the one before wrote, which its history cannot explain.
				cfg := Config{Endpoints: c.Endpoints, Clients: clients, Keys: 8, Rate: 1_000_000, RequestTimeout: 5 * time.Second,
					KeyPrefix: fmt.Sprintf("bench/%d/%d/%d/", clients, watchers, time.Now().UnixNano()), RetryBackoff: 100 * time.Millisecond, FinalReadBudget: 10 * time.Second,
					Watchers: watchers, WatchResumeEvery: 5 * time.Second}
				start := time.Now()
				srv, err := Start(cfg)
				if err != nil {
					b.Fatal(err)
				}
				for srv.Recorder().Len() < b.N {
					time.Sleep(5 * time.Millisecond)
				}
				if err := srv.Stop(); err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				h := srv.Recorder().History()
				checked := time.Now()
				r := validate.Validate(h, validate.Options{Timeout: time.Minute})
				if !r.Passed() {
					b.Fatalf("history of %d operations failed: %q", len(h.Operations), r.Failures)
				}
				b.ReportMetric(float64(r.Stats.Puts+r.Stats.Gets)/elapsed.Seconds(), "ops/s")
				b.ReportMetric(float64(time.Since(checked).Milliseconds()), "validate-ms")
				b.ReportMetric(float64(r.Stats.LatencyP99.Microseconds())/1000, "p99-ms")
				if r.Watch != nil {
					b.ReportMetric(float64(r.Watch.Stats.Events)/elapsed.Seconds(), "events/s")
				}
			})
		}
	}
}
