package framework

import (
	"fmt"
	"io"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best dot-imported.
)

// progressEvery is how often a wait that lasts says so: often enough that
// a person watching the terminal never wonders whether the run is stuck,
// rarely enough that a wait of a few seconds prints nothing.
const progressEvery = 30 * time.Second

// waitProgress prints a line to GinkgoWriter (the terminal, in the suite's
// verbose mode) every progressEvery until the returned stop is called:
// what the run waits for, how long it has waited and its budget, which is
// intervals[0] as every wait here takes it. Use: defer waitProgress(...)().
func waitProgress(what string, intervals []any) (stop func()) {
	return startProgress(GinkgoWriter, progressEvery, what, intervals[0].(time.Duration))
}

func startProgress(w io.Writer, every time.Duration, what string, budget time.Duration) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				fmt.Fprintf(w, "  … waiting for %s: %s of %s\n", what, now.Sub(start).Round(time.Second), budget)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
