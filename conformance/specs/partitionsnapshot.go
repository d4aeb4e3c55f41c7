package specs

import (
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/etcdproof/etcdproof/conformance/cluster"
	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// partitionPhase is what the partition check's second phase shares with
// its first: the cluster, healthy again with its markers, and its nodes.
type partitionPhase struct {
	env     *framework.Env
	report  *report.Recorder
	cluster *framework.EtcdCluster
	nodes   *cluster.Nodes
	want    framework.Want
}

// snapshotCatchUpEntries is how many entries etcd keeps in its raft log
// behind each snapshot for slow followers (--snapshot-catchup-entries,
// 5,000 from 3.4 to 3.7). Once a leader has saved a snapshot more than
// that past a follower's last entry, the entries the follower lacks are
// gone and it can only catch up from a snapshot of the whole database.
const snapshotCatchUpEntries = 5000

// The writes that grow the raft log while the follower is cut off: many
// small puts at once, through the leader.
const (
	logPrefix      = "etcdproof/partition-log/"
	logWriters     = 128
	logWritesRound = 2000
)

// errHoldOver ends the writes when the partition has lasted its hold.
var errHoldOver = errors.New("hold over")

// snapshotCatchUp is the partition check's second phase, the one etcd's
// robustness tests call "blackhole until snapshot": a follower cut off
// while the members left write until the leader has saved a raft snapshot
// more than snapshotCatchUpEntries past the follower's last entry (read
// from the leader's status and metrics), then healed. The follower must
// keep its place meanwhile and catch up from the snapshot the leader
// sends, every acknowledged write kept, within partition/catch-up. A
// follower that is seen to catch up with no snapshot received leaves the
// phase unobserved: the leader's log still held what it lacked.
func snapshotCatchUp(ctx SpecContext, in partitionPhase) {
	const check = "partition"
	e, rep, c := in.env, in.report, in.cluster
	_, truth := c.WaitForHealthy(ctx, in.want, e.Config.GetIntervals(check, "members-ready")...)
	leader, err := truth.PodOfMember(truth.LeaderID)
	Expect(err).NotTo(HaveOccurred())
	victim, err := truth.NonLeaderPod()
	Expect(err).NotTo(HaveOccurred())
	var victimID uint64
	for _, p := range truth.Pods {
		if p.Pod == victim {
			victimID = p.MemberID
		}
	}
	pod, err := c.Pod(ctx, victim)
	Expect(err).NotTo(HaveOccurred())
	victimUID := pod.UID
	before, err := c.RaftLogOf(ctx, victim)
	Expect(err).NotTo(HaveOccurred(), "reading follower %s's raft log before the cut", victim)

	hold := e.Profile.Operator.PartitionHold(e.Config.Timeout(check, "snapshot-hold"))
	var catchUp time.Duration
	// A follower cut off calls no election on a release with pre-vote
	// (3.5 on); a 3.4 one comes back with a higher term: one change.
	limits := framework.TrafficLimits{MaxWriteGap: e.Config.Budget("partition/longest-write-gap"), FaultInjected: true, MembersChanged: 1}
	res := withTraffic(ctx, trafficInput{Env: e, Report: rep, Cluster: c, Check: check, Phase: "snapshot-catch-up", Limits: limits}, func() {
		By(fmt.Sprintf("cutting follower %s off the network until the leader's raft log no longer holds what it lacks (at most %s)", victim, hold))
		cut := time.Now()
		p, err := in.nodes.Partition(ctx, pod, c.EtcdContainer(pod))
		if err != nil {
			Incomplete(rep, check, "could not cut pod %s off the network: %v", victim, err)
		}
		DeferCleanup(func(ctx SpecContext) { Expect(p.Heal(ctx)).To(Succeed()) })
		start, err := c.RaftLogOf(ctx, leader)
		Expect(err).NotTo(HaveOccurred(), "reading the leader %s's raft log after the cut", leader)
		applied, compacted := start.AppliedIndex, false
		var last framework.RaftLog
		written, err := c.WriteThrough(ctx, leader, logPrefix, logWriters, logWritesRound, func(int) (bool, error) {
			if err := InterceptGomegaFailure(func() {
				expectMemberKept(Default, ctx, c, in.want, victim, victimID, victimUID)
			}); err != nil {
				return true, err
			}
			if last, err = c.RaftLogOf(ctx, leader); err != nil {
				return true, fmt.Errorf("reading the leader %s's raft log: %w", leader, err)
			}
			// A snapshot saved since the last look was taken at an
			// index at least the one applied then.
			compacted = last.SnapshotsSaved > start.SnapshotsSaved && applied > start.LastIndex+snapshotCatchUpEntries
			applied = last.AppliedIndex
			if compacted {
				return true, nil
			}
			if time.Since(cut) > hold {
				return true, errHoldOver
			}
			return false, nil
		})
		switch {
		case errors.Is(err, errHoldOver):
			Incomplete(rep, check, "the leader never dropped from its raft log the entries follower %s lacks: %d writes in %s took its log from index %d to %d with %v snapshots saved (a snapshot count larger than the check can write within its hold: partition/snapshot-hold, or two thirds of operator.unansweringMemberDeadline)",
				victim, written, hold, start.LastIndex, last.AppliedIndex, last.SnapshotsSaved-start.SnapshotsSaved)
		case err != nil:
			Fail(fmt.Sprintf("while follower %s was cut off: %v", victim, err))
		}
		rep.Note(check, "cut off follower %s; %d writes through the leader %s took its log from index %d to %d and it saved a snapshot past %d, %s after the cut",
			victim, written, leader, start.LastIndex, last.AppliedIndex, start.LastIndex+snapshotCatchUpEntries, time.Since(cut).Round(time.Millisecond))

		By("healing the partition: the follower must catch up from a snapshot")
		Expect(p.Heal(ctx)).To(Succeed())
		healed := time.Now()
		c.WaitForHealthy(ctx, in.want, e.Config.GetIntervals(check, "members-ready")...)
		catchUp = time.Since(healed)
	})
	Eventually(ctx, func(g Gomega) {
		expectMemberKept(g, ctx, c, in.want, victim, victimID, victimUID)
	}).WithTimeout(e.Config.Timeout(check, "new-leader")).WithPolling(e.Config.Polling(check, "new-leader")).Should(Succeed())
	after, err := c.RaftLogOf(ctx, victim)
	Expect(err).NotTo(HaveOccurred(), "reading follower %s's raft log after the heal", victim)
	if after.SnapshotsReceived > before.SnapshotsReceived {
		rep.Note(check, "follower %s caught up from a snapshot (%v received) %s after the heal", victim, after.SnapshotsReceived-before.SnapshotsReceived, catchUp.Round(time.Millisecond))
	} else {
		unobserved(rep, check, "follower %s caught up with no snapshot received: the leader still held the entries it lacked", victim)
	}
	expectWithin(rep, check, "snapshot-catch-up", catchUp, e.Config.Budget("partition/catch-up"))
	expectTraffic(res, check)
}
