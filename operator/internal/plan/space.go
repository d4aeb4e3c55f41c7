package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// etcd's backend file only grows: a compaction frees pages inside it, which
// etcd reuses, and only a defragmentation gives them back. etcd's quota
// counts the file, so once NOSPACE is raised, deleting and compacting are
// not enough to take writes again: the members must be defragmented, and
// then the alarm disarmed.
//
// History is compacted by etcd's auto-compaction
// (desired.DefaultAutoCompactionRetention), except under NOSPACE: then the
// operator compacts to the latest revision first, as etcd's own recovery
// procedure does. Not only to free what the last minutes of history hold:
// the pages a compaction frees show as free only after etcd's next backend
// commit, and under NOSPACE nothing commits, so the sizes would go on
// saying the data fills the quota. A physical compaction commits. Watchers
// lose little: no revision is written under NOSPACE but deletes, and a
// watcher that saw the latest revision resumes as before; one further
// behind gets "compacted" and lists again. It is done once per revision:
// a revision already compacted is not compacted again.

// DisarmPercent: NOSPACE is disarmed once every member's file is at most
// this share of its quota, so writes resume with at least a fifth of the
// quota free (400 MiB at the default), below the 95% at which the usual
// alert (etcdBackendQuotaLowSpace) fires. Disarming any closer to the
// quota would let writes fill it again at once, and the alarm would come
// and go in a loop.
const DisarmPercent = 80

// disarmLine is the file size at or under which NOSPACE may be disarmed.
func disarmLine(quota int64) int64 { return quota / 100 * DisarmPercent }

// Fragmented: without an alarm, a member is defragmented when its free
// pages are more than half its file (etcd reuses free pages, so less is
// ordinary churn) and more than a tenth of its quota (below that the space
// matters to nobody, and a defragmentation stops the member for nothing).
func Fragmented(m Member) bool {
	free := m.DBSize - m.DBSizeInUse
	return free*2 > m.DBSize && free*10 > quotaOrDefault(m)
}

// quotaOrDefault is the member's quota, or etcd's default when unknown:
// enough to judge fragmentation, never to disarm.
func quotaOrDefault(m Member) int64 {
	if m.Quota > 0 {
		return m.Quota
	}
	return desired.EtcdDefaultQuotaBackendBytes
}

// sized: the member answered with its sizes.
func sized(m Member) bool { return m.Healthy && m.DBSize > 0 }

// needsDefragment: the member is fragmented, or under NOSPACE its file is
// over the disarm line while its data in use is under it (a
// defragmentation brings it under).
func needsDefragment(o Observed, m Member) bool {
	if !sized(m) {
		return false
	}
	if Fragmented(m) {
		return true
	}
	line := disarmLine(m.Quota)
	if !o.NoSpace || m.Quota == 0 || m.DBSize <= line {
		return false
	}
	// Under the line once defragmented; or, whatever its data in use says,
	// a sixteenth of its quota free: etcd commits its backend late under
	// NOSPACE (no write is taken), so the size in use a member reports can
	// still count pages a compaction freed, and only a defragmentation
	// makes it true. Once done, a member whose data really fills it has
	// nothing left free, so it is not done again.
	return m.DBSizeInUse <= line || m.DBSize-m.DBSizeInUse > m.Quota/16
}

// spareVoter: defragmenting m (which serves nothing meanwhile) leaves a
// quorum of the voters healthy. With one or two voters there is none to
// spare, so they are never defragmented here.
func spareVoter(o Observed, m Member) bool {
	if m.IsLearner {
		return true
	}
	others, voters := healthyVotersWithout(o, m)
	return others >= voters/2+1
}

// spaceJudgement is what the sizes say, for the plan and the condition.
type spaceJudgement struct {
	// next is the member to defragment now: followers first, the one with
	// the most free pages first, the leader last; nil when none.
	next *Member
	// held is a member that needs it while no voter can be spared.
	held *Member
	// fills is, under NOSPACE, a member whose data in use is over the line.
	fills *Member
	// unsized is a member that did not answer with its sizes, unknown one
	// whose quota cannot be told.
	unsized, unknown *Member
	// largest is the member whose file is the largest share of its quota.
	largest *Member
}

func judgeSpace(o Observed) spaceJudgement {
	var j spaceJudgement
	var candidates []Member
	for i := range o.Members {
		m := &o.Members[i]
		switch {
		case !sized(*m):
			j.unsized = m
			continue
		case m.Quota == 0:
			j.unknown = m
		case m.DBSizeInUse > disarmLine(m.Quota):
			j.fills = m
		}
		if j.largest == nil || m.DBSize*quotaOrDefault(*j.largest) > j.largest.DBSize*quotaOrDefault(*m) {
			j.largest = m
		}
		if needsDefragment(o, *m) {
			candidates = append(candidates, *m)
		}
	}
	slices.SortStableFunc(candidates, func(a, b Member) int {
		if lead := cmpBool(a.ID == o.LeaderID, b.ID == o.LeaderID); lead != 0 {
			return lead
		}
		return cmp.Compare(b.DBSize-b.DBSizeInUse, a.DBSize-a.DBSizeInUse)
	})
	for _, m := range candidates {
		if !spareVoter(o, m) {
			j.held = &m
			break
		}
		j.next = &m
		break
	}
	return j
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// disarmable: every member answered, with a known quota, and every file is
// under the line.
func (j spaceJudgement) disarmable(o Observed) bool {
	if j.unsized != nil || j.unknown != nil || j.fills != nil || len(o.Members) == 0 {
		return false
	}
	for _, m := range o.Members {
		if m.DBSize > disarmLine(m.Quota) {
			return false
		}
	}
	return true
}

// reclaimSpace, under NOSPACE, defragments one member per pass, then
// disarms the alarm once every file is under the line. It runs before
// scaling and upgrades: the cluster refuses writes meanwhile. When it can
// do nothing (data fills the quota, no voter to spare) it lets the other
// steps go on; SpaceCondition says why.
func reclaimSpace(o Observed, opts Options, _ string) (Action, bool) {
	if !o.NoSpace || opts.LeaveNoSpace {
		return Action{}, false
	}
	if o.HistoryKept {
		return Action{Kind: CompactHistory, Revision: o.Revision, Reason: conditions.ReasonNoSpace,
			Message:      fmt.Sprintf("compacting etcd's history to revision %d, so that the sizes show what it held", o.Revision),
			RequeueAfter: AfterChange}, true
	}
	j := judgeSpace(o)
	if j.next != nil {
		return defragmentAction(o, *j.next, conditions.ReasonNoSpace), true
	}
	if j.disarmable(o) {
		return Action{Kind: DisarmNoSpace, Reason: conditions.ReasonNoSpace,
			Message: fmt.Sprintf("disarming NOSPACE: every member's file is at most %d%% of its quota (%s)",
				DisarmPercent, describeSize(*j.largest)),
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}

// defragment gives a fragmented member its free pages back once nothing
// else is to be done.
func defragment(o Observed, _ Options, _ string) (Action, bool) {
	if j := judgeSpace(o); j.next != nil {
		return defragmentAction(o, *j.next, conditions.ReasonDefragmenting), true
	}
	return Action{}, false
}

func defragmentAction(o Observed, m Member, reason string) Action {
	role := "follower"
	if m.ID == o.LeaderID {
		role = "leader"
	}
	return Action{Kind: Defragment, Member: m.Name, MemberID: m.ID, Reason: reason,
		Message: fmt.Sprintf("defragmenting %s %s: %s, %s of it free", role, m.Name, describeSize(m),
			mebibytes(m.DBSize-m.DBSizeInUse)),
		RequeueAfter: AfterChange}
}

// SpaceVerdict is the SpaceAvailable condition.
type SpaceVerdict struct {
	Status          bool
	Reason, Message string
}

// SpaceCondition is the SpaceAvailable condition while NOSPACE is active
// (False, with what the operator does or why it cannot), or True with the
// largest file against its quota; ok is false when it cannot be told (no
// member answered with its sizes).
func SpaceCondition(o Observed) (v SpaceVerdict, ok bool) {
	if !o.MembershipKnown {
		return v, false
	}
	j := judgeSpace(o)
	if !o.NoSpace {
		if j.largest == nil {
			return v, false
		}
		return SpaceVerdict{true, conditions.ReasonWithinQuota,
			fmt.Sprintf("the largest member file is %s (%s)", describeSize(*j.largest), j.largest.Name)}, true
	}
	prefix := "NOSPACE: the cluster refuses writes; "
	switch {
	case o.HistoryKept:
		return SpaceVerdict{false, conditions.ReasonNoSpace, prefix + fmt.Sprintf(
			"compacting etcd's history to revision %d, then defragmenting the members one at a time and disarming the alarm", o.Revision)}, true
	case j.fills != nil:
		m := *j.fills
		return SpaceVerdict{false, conditions.ReasonDataFillsQuota, prefix + fmt.Sprintf(
			"member %s holds %s of live data, over %d%% of its %s quota: the alarm stays, or writes would fill the quota "+
				"again at once. Delete keys (the operator then compacts and defragments), or raise the quota "+
				"(ETCD_QUOTA_BACKEND_BYTES in spec.pod.etcdEnv, for members made after)",
			m.Name, mebibytes(m.DBSizeInUse), DisarmPercent, mebibytes(m.Quota))}, true
	case j.unsized != nil:
		return SpaceVerdict{false, conditions.ReasonNoSpace, prefix + fmt.Sprintf(
			"waiting for member %s to answer with its sizes", j.unsized.Name)}, true
	case j.held != nil:
		m := *j.held
		return SpaceVerdict{false, conditions.ReasonDefragmentationHeld, prefix + fmt.Sprintf(
			"member %s (%s, %s of it in use) must be defragmented, which stops it serving for a while, and the cluster "+
				"has no voter to spare (%d voters): defragment it by hand (etcdctl defrag) and disarm the alarm "+
				"(etcdctl alarm disarm), or add members",
			m.Name, describeSize(m), mebibytes(m.DBSizeInUse), Voters(o.Members))}, true
	case j.unknown != nil:
		return SpaceVerdict{false, conditions.ReasonNoSpace, prefix + fmt.Sprintf(
			"the quota of member %s cannot be told (etcd before 3.6 does not report it, and its pod takes "+
				"%s from elsewhere): the alarm is not disarmed; disarm it by hand (etcdctl alarm disarm)",
			j.unknown.Name, desired.EnvQuotaBackendBytes)}, true
	case j.next != nil:
		return SpaceVerdict{false, conditions.ReasonNoSpace, prefix + fmt.Sprintf(
			"defragmenting the members one at a time, then disarming the alarm; next %s (%s)", j.next.Name, describeSize(*j.next))}, true
	}
	return SpaceVerdict{false, conditions.ReasonNoSpace, prefix + fmt.Sprintf(
		"every member's file is at most %d%% of its quota: disarming the alarm", DisarmPercent)}, true
}

func describeSize(m Member) string {
	return fmt.Sprintf("%s of its %s quota", mebibytes(m.DBSize), mebibytes(m.Quota))
}

func mebibytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
