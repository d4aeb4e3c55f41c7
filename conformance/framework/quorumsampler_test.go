package framework

import (
	"testing"
	"time"
)

// A sample is below quorum only when fewer voters run than a majority of
// those in the member list, even counting the ones the suite could not
// reach; a quorum running with no leader is an election, not a quorum
// loss; a sample taken before any member list was seen (no voters known)
// judges nothing.
func TestQuorumSamplesBelowQuorum(t *testing.T) {
	at := time.Unix(0, 0)
	samples := QuorumSamples{
		{At: at, Voters: 0, Running: 0},
		{At: at, Voters: 3, Running: 3, Healthy: 3},
		{At: at, Voters: 3, Running: 2, Healthy: 2},
		{At: at.Add(time.Second), Voters: 3, Running: 1, Healthy: 0},
		{At: at, Voters: 4, Running: 3, Healthy: 3},
		{At: at, Voters: 4, Running: 2, Healthy: 0},
		{At: at, Voters: 2, Running: 1, Healthy: 1},
		// The leader was killed: two voters run, neither serves a read yet.
		{At: at, Voters: 3, Running: 2, Healthy: 0},
		// One running pod could not be reached: it may run.
		{At: at, Voters: 3, Running: 1, Unasked: 1},
		// The pods could not be listed: nothing was asked, so nothing is
		// judged (it used to count as 0 of 3 healthy, a FAIL the suite made).
		{At: at, Voters: 3, NotSampled: "listing the member pods: timeout"},
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
	if n := samples.Leaderless(); n != 1 {
		t.Errorf("Leaderless = %d, want 1 (the killed leader's election)", n)
	}
	if n := samples.Sampled(); n != len(samples)-1 {
		t.Errorf("Sampled = %d, want %d", n, len(samples)-1)
	}
	if r, v := samples[1:].MinRunning(); r != 1 || v != 3 {
		t.Errorf("MinRunning = %d of %d, want 1 of 3", r, v)
	}
	if r, _ := (QuorumSamples{}).MinRunning(); r != -1 {
		t.Errorf("MinRunning of no samples = %d, want -1", r)
	}
	// The check's own outage leaves its samples unjudged.
	outage := []Window{{From: at.Add(time.Second)}}
	if n := len(samples.Outside(outage).BelowQuorum()); n != 2 {
		t.Errorf("below quorum outside the outage: %d, want 2", n)
	}
}
