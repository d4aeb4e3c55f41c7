package specs

import (
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// outages are the windows in which a check itself takes a cluster's
// quorum away (quorum-loss): the quorum samples in them judge nothing.
type outages struct {
	mu      sync.Mutex
	windows []framework.Window
}

// begin opens a window now.
func (o *outages) begin() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.windows = append(o.windows, framework.Window{From: time.Now()})
}

// end closes the open window now.
func (o *outages) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.windows); n > 0 && o.windows[n-1].To.IsZero() {
		o.windows[n-1].To = time.Now()
	}
}

// list is the windows so far; a nil outages has none.
func (o *outages) list() []framework.Window {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]framework.Window(nil), o.windows...)
}

// judgeQuorum notes what a phase's quorum samples saw and fails the check
// on a sample with fewer running voters than a quorum outside the check's
// own outages: no operator step may take a cluster's quorum, however
// briefly, whatever the clients' requests happened to show. context is
// added to the failure (what could have prevented it).
func judgeQuorum(rep *report.Recorder, check, phase string, samples framework.QuorumSamples, windows []framework.Window, context string) {
	if samples.Sampled() == 0 {
		// The check goes on judging what it can; with nothing else wrong it
		// ends INCOMPLETE, never passed on a quorum it could not see.
		unobserved(rep, check, "the quorum could not be sampled during %s (%d tries, none could ask the members)", phase, len(samples))
		return
	}
	judged := samples.Outside(windows)
	running, voters := judged.MinRunning()
	rep.Note(check, "%d quorum samples during %s (%d could not ask, %d in the check's own outages, %d during an election): at least %d of %d voters running at every sample judged",
		len(samples), phase, len(samples)-samples.Sampled(), len(samples)-len(judged), samples.Leaderless(), running, voters)
	if below := judged.BelowQuorum(); len(below) > 0 {
		first := below[0]
		Fail(fmt.Sprintf("quorum lost during %s: fewer running voters than a quorum at %d of %d samples, first at %s with %d of %d voters running (%d member pods unreachable)%s",
			phase, len(below), len(judged), first.At.Format(time.RFC3339), first.Running, first.Voters, first.Unasked, context), 2)
	}
}
