package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// Seed is what a member pod started on a copy of a survivor's data records
// (desired.AnnotationSeededFrom and the two next to it).
type Seed struct {
	// From is the survivor pod whose data was copied, at raft index RaftIndex.
	From      string
	RaftIndex uint64
	// Replaces names the pods of the old cluster, deleted once the seeded
	// member runs.
	Replaces []string
}

// Local is what the etcd of one member pod says on its own: its status and
// the membership as it knows it, read without asking the leader.
type Local struct {
	Pod       string
	MemberID  uint64
	RaftIndex uint64
	LeaderID  uint64
	Members   []Member
}

// QuorumLoss is a quorum lost for good on emptyDir.
type QuorumLoss struct {
	// Survivor is the answering member with the highest raft index: the one
	// that holds the most of what the cluster committed.
	Survivor Local
	// Lost names the voters whose pods are gone, and their data with them.
	Lost   []string
	Voters int
}

// LostQuorum reports a quorum lost for good: the members keep their data on
// emptyDir, no answering member knows a leader, and so many voters lost their
// pods (and with them their data) that the voters left can never elect one.
// A voter whose pod is still there but does not run is not lost: its node may
// come back.
func LostQuorum(o Observed) (QuorumLoss, bool) {
	if o.UsesPVC || len(o.Local) == 0 {
		return QuorumLoss{}, false
	}
	var survivors []Local
	for _, l := range o.Local {
		if l.LeaderID != 0 {
			return QuorumLoss{}, false
		}
		if p, ok := o.pod(l.Pod); ok && !p.Terminating && !p.Failed {
			survivors = append(survivors, l)
		}
	}
	if len(survivors) == 0 {
		return QuorumLoss{}, false
	}
	best := slices.MaxFunc(survivors, func(a, b Local) int {
		return cmp.Or(cmp.Compare(a.RaftIndex, b.RaftIndex), strings.Compare(b.Pod, a.Pod))
	})
	loss := QuorumLoss{Survivor: best}
	for _, m := range best.Members {
		if m.IsLearner {
			continue
		}
		loss.Voters++
		if p, ok := o.pod(m.Name); !ok || p.Failed || p.Terminating {
			loss.Lost = append(loss.Lost, m.Name)
		}
	}
	quorum := loss.Voters/2 + 1
	if loss.Voters == 0 || loss.Voters-len(loss.Lost) >= quorum {
		return QuorumLoss{}, false
	}
	slices.Sort(loss.Lost)
	return loss, true
}

// Retiring finds a recovery from a survivor in progress: a seeded member pod
// while pods it replaces are left. Those belong to the old cluster, which
// the operator no longer reads (the gatherer leaves them out).
func Retiring(pods []Pod) (seed Pod, old []string, ok bool) {
	exists := map[string]bool{}
	for _, p := range pods {
		exists[p.Name] = true
	}
	for _, p := range slices.SortedFunc(slices.Values(pods), func(a, b Pod) int { return strings.Compare(a.Name, b.Name) }) {
		if p.Seed == nil {
			continue
		}
		for _, name := range p.Seed.Replaces {
			if exists[name] {
				old = append(old, name)
			}
		}
		if len(old) > 0 {
			return p, old, true
		}
	}
	return Pod{}, nil, false
}

// recoverFromSurvivor handles a quorum lost for good on emptyDir. Without
// the cluster's consent it changes nothing: starting again from a survivor
// loses the writes it had not received, which the lost majority acknowledged.
// With it: a new one-member cluster is seeded from a copy of the survivor's
// data, then the old pods are deleted, then the usual scaling grows it back.
// Each step is decided from the pods as they are, so an operator that stops
// between two steps is followed by one that takes the next.
func recoverFromSurvivor(o Observed, version string) (Action, bool) {
	if seed, old, ok := Retiring(o.Pods); ok {
		return retireOldMembers(o, seed, old), true
	}
	loss, ok := LostQuorum(o)
	if !ok {
		return Action{}, false
	}
	s := loss.Survivor
	what := fmt.Sprintf("quorum is lost for good: %d of %d voting members (%s) are gone with their data (emptyDir); member %s survives at raft index %d",
		len(loss.Lost), loss.Voters, strings.Join(loss.Lost, ", "), s.Pod, s.RaftIndex)
	if !o.RecoverFromSurvivor {
		return wait(conditions.ReasonQuorumLost, fmt.Sprintf(
			"%s. Nothing is changed. To start the cluster again from %s's data, losing the writes it had not received, annotate the EtcdCluster with %s=true",
			what, s.Pod, desired.AnnotationRecoverFromSurvivor), PollInFlight), true
	}
	if o.SeedImage == "" {
		return wait(conditions.ReasonQuorumLost, what+". The cluster asks to recover from the survivor, but the operator does not know "+
			"its own image, which copies the data: start it with --seed-image", PollSteady), true
	}
	survivor, _ := o.pod(s.Pod)
	if survivor.Version != "" {
		version = survivor.Version // the version that wrote the data reads it
	}
	var old []string
	for _, p := range o.Pods {
		old = append(old, p.Name)
	}
	slices.Sort(old)
	return Action{Kind: SeedFromSurvivor, From: s.Pod, RaftIndex: s.RaftIndex, Names: old, Version: version,
		Reason: conditions.ReasonRecoveringFromSurvivor,
		Message: fmt.Sprintf("%s. Starting a new cluster from a copy of %s's data: writes acknowledged by the lost members that %s had not received are missing",
			what, s.Pod, s.Pod),
		RequeueAfter: PollInFlight}, true
}

// retireOldMembers waits for the seeded member to run, then deletes the old
// cluster's pods. A seeded pod that failed is deleted, so the next pass seeds
// another from the old cluster, which is still there.
func retireOldMembers(o Observed, seed Pod, old []string) Action {
	from := fmt.Sprintf("member %s, seeded from a copy of %s's data (raft index %d; writes acknowledged by the lost members that %s had not received are missing)",
		seed.Name, seed.Seed.From, seed.Seed.RaftIndex, seed.Seed.From)
	if seed.Failed {
		return Action{Kind: DeleteOrphanPod, Member: seed.Name, Reason: conditions.ReasonRecoveringFromSurvivor,
			Message: fmt.Sprintf("%s failed: deleting it to seed another", from), RequeueAfter: PollInFlight}
	}
	if seed.Terminating {
		return wait(conditions.ReasonRecoveringFromSurvivor, fmt.Sprintf("%s is terminating", from), PollInFlight)
	}
	running := false
	for _, m := range o.Members {
		running = running || (m.Name == seed.Name && m.Healthy)
	}
	if !o.MembershipKnown || !running || o.LeaderID == 0 {
		return wait(conditions.ReasonRecoveringFromSurvivor, fmt.Sprintf("starting %s", from), PollInFlight)
	}
	var left []string
	for _, name := range old {
		if p, ok := o.pod(name); ok && !p.Terminating {
			left = append(left, name)
		}
	}
	if len(left) == 0 {
		return wait(conditions.ReasonRecoveringFromSurvivor, fmt.Sprintf("%s runs; waiting for the old pods to go", from), PollInFlight)
	}
	return Action{Kind: RetireOldMembers, Names: left, Reason: conditions.ReasonRecoveringFromSurvivor,
		Message: fmt.Sprintf("%s runs; deleting the old pods %s", from, strings.Join(left, ", ")), RequeueAfter: AfterChange}
}
