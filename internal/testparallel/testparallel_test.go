package testparallel_test

import (
	"flag"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/internal/testparallel"
)

func TestMain(m *testing.M) {
	testparallel.Default(3)
	os.Exit(m.Run())
}

var running, most atomic.Int32

// TestParallelIsRaised runs three parallel tests that each wait for the
// others: with go test's default (GOMAXPROCS) on a one- or two-core machine
// they could not all run at once.
func TestParallelIsRaised(t *testing.T) {
	if got := flag.Lookup("test.parallel").Value.String(); got != "3" {
		t.Skipf("-test.parallel=%s given on the command line", got)
	}
	for _, name := range []string{"a", "b", "c"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for most.Load() < 3 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if most.Load() < 3 {
				t.Errorf("at most %d tests ran at once, want 3", most.Load())
			}
		})
	}
}
