package plan

import "time"

// DefaultLearnerDeadline is the fixed part of the learner deadline (see
// learnerDeadline). What a healthy learner needs, from its etcd's start, to
// be promoted: reach the other members and learn the leader (seconds: a
// peer dial and an election timeout); receive the leader's snapshot, its
// whole database file (learnerCatchUpRate, the part that grows with the
// data); then apply the entries since until its log is within a tenth of
// the leader's, which is what etcd's promotion check asks (seconds). Two
// minutes cover the fixed steps many times over, a slow disk syncing the
// snapshot included.
const DefaultLearnerDeadline = 2 * time.Minute

// learnerCatchUpRate is the slowest rate at which a working peer link
// carries the leader's snapshot to a learner (etcd streams it unthrottled):
// 10 MiB/s, a congested or cross-zone 100 Mbit/s link. The learner deadline
// grows by a minute for each full 600 MiB of the largest member's database.
const learnerCatchUpRate = 10 << 20 // bytes per second

// learnerDeadline is how long a learner's etcd may run without being
// promoted before it counts as dead: LearnerDeadline, plus the time the
// largest member's database takes to cross a slow peer link, in whole
// minutes (rounded down: the fixed part has room for the rest) so that the
// deadline, quoted in the Recovering condition, does not change on every
// pass. At the default 2 GiB quota it is at most 5 minutes; at etcd's
// suggested maximum of 8 GiB, 15.
func (o Observed) learnerDeadline() time.Duration {
	if o.LearnerDeadline <= 0 {
		return 0
	}
	var largest int64
	for _, m := range o.Members {
		largest = max(largest, m.DBSize)
	}
	const perMinute = learnerCatchUpRate * 60
	return o.LearnerDeadline + time.Duration(largest/perMinute)*time.Minute
}

// learnerSince is when learner m's etcd started, the clock of the learner
// deadline; false for a voter, and for a learner whose pod is gone, going
// or does not run (the other deadlines judge those). A learner whose
// container restarts starts again from nothing, and so does its clock.
func (o Observed) learnerSince(m Member) (time.Time, bool) {
	if !m.IsLearner || o.LearnerDeadline <= 0 {
		return time.Time{}, false
	}
	p, ok := o.pod(m.Name)
	if !ok || p.Terminating || p.Failed || p.NotRunning != "" || p.RunningSince.IsZero() {
		return time.Time{}, false
	}
	return p.RunningSince, true
}

// learnerStuck: learner m's etcd has run for longer than the learner
// deadline without being promoted. It never reached the other members or
// the leader, or etcd refuses its promotion as not caught up: either way a
// lost voter's replacement would wait behind it for ever.
func (o Observed) learnerStuck(m Member) bool {
	since, ok := o.learnerSince(m)
	return ok && o.Now.Sub(since) > o.learnerDeadline()
}

// whyNotPromoted says what the members said of learner m.
func whyNotPromoted(m Member) string {
	switch {
	case !m.Started:
		return "it never reached the other members (it has not published its name)"
	case !m.Healthy:
		return "it does not answer, or knows no leader"
	}
	return "etcd refuses to promote it: it has not caught up with the leader's log"
}
