package framework

import (
	"testing"
	"time"
)

// A sample is below quorum only when fewer voters answered than a majority
// of those in the member list; a sample taken before any member list was
// seen (no voters known) judges nothing.
func TestQuorumSamplesBelowQuorum(t *testing.T) {
	at := time.Unix(0, 0)
	samples := QuorumSamples{
		{At: at, Voters: 0, Healthy: 0},
		{At: at, Voters: 3, Healthy: 3},
		{At: at, Voters: 3, Healthy: 2},
		{At: at.Add(time.Second), Voters: 3, Healthy: 1},
		{At: at, Voters: 4, Healthy: 3},
		{At: at, Voters: 4, Healthy: 2},
		{At: at, Voters: 2, Healthy: 1},
		// The pods could not be listed: nothing was asked, so nothing is
		// judged (it used to count as 0 of 3 healthy, a FAIL the suite made).
		{At: at, Voters: 3, Healthy: 0, NotSampled: "listing the member pods: timeout"},
	}
	below := samples.BelowQuorum()
	want := []QuorumSample{samples[3], samples[5], samples[6]}
	if len(below) != len(want) {
		t.Fatalf("below quorum: %+v, want %+v", below, want)
	}
	for i := range want {
		if below[i] != want[i] {
			t.Errorf("below[%d] = %+v, want %+v", i, below[i], want[i])
		}
	}
	if n := samples.Sampled(); n != len(samples)-1 {
		t.Errorf("Sampled = %d, want %d", n, len(samples)-1)
	}
	if h, v := samples[1:].MinHealthy(); h != 1 || v != 3 {
		t.Errorf("MinHealthy = %d of %d, want 1 of 3", h, v)
	}
	if h, _ := (QuorumSamples{}).MinHealthy(); h != -1 {
		t.Errorf("MinHealthy of no samples = %d, want -1", h)
	}
}
