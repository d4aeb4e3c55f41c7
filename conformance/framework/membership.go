package framework

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// membershipWatch turns the ground truths the suite probes anyway into
// events when etcd's member list or leader differs from the last probe:
// what etcd itself said, next to what the pods did. A change is seen when
// the suite probes (WaitForHealthy's polls), not when it happened.
type membershipWatch struct {
	object string
	record func(report.Event)

	mu      sync.Mutex
	seen    bool
	members []string
	leader  string
}

// RecordMembershipChanges has every later ground truth of the cluster
// record a change of its member list or leader.
func (c *EtcdCluster) RecordMembershipChanges(record func(report.Event)) {
	c.membership = &membershipWatch{object: objectName(c.env.Profile.Cluster.Kind, c.Name), record: record}
}

// observe compares a probe with the last one. A probe that reached no
// member, or whose members disagree on the leader, says nothing new
// about what it could not see.
func (m *membershipWatch) observe(t Truth, at time.Time) {
	members, leader := memberNames(t), agreedLeader(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	var changes []podChange
	switch {
	case len(members) == 0:
	case !m.seen:
		msg := "members " + strings.Join(members, ", ")
		if leader != "" {
			msg += "; leader " + leader
		}
		changes = append(changes, podChange{Reason: "Members", Message: msg})
		m.seen, m.members = true, members
	case !slices.Equal(members, m.members):
		added, removed := difference(members, m.members), difference(m.members, members)
		var parts []string
		if len(added) > 0 {
			parts = append(parts, "added "+strings.Join(added, ", "))
		}
		if len(removed) > 0 {
			parts = append(parts, "removed "+strings.Join(removed, ", "))
		}
		changes = append(changes, podChange{Reason: "MembersChanged", Message: strings.Join(parts, "; ") + ": members " + strings.Join(members, ", ")})
		m.members = members
	}
	if leader != "" && leader != m.leader {
		if m.leader != "" {
			changes = append(changes, podChange{Reason: "LeaderChanged", Message: fmt.Sprintf("leader %s → %s", m.leader, leader)})
		}
		m.leader = leader
	}
	for _, c := range changes {
		m.record(report.Event{Time: at, Source: report.SourceEtcd, Object: m.object, Reason: c.Reason, Message: c.Message, Level: report.LevelNormal})
	}
}

// memberNames are the members etcd lists, sorted; a member not started
// yet has no name, a learner is marked.
func memberNames(t Truth) []string {
	var names []string
	for _, m := range t.Members {
		name := m.Name
		if name == "" {
			name = fmt.Sprintf("%x (not started)", m.ID)
		}
		if m.IsLearner {
			name += " (learner)"
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// agreedLeader is the name of the leader every answering member names;
// "" when they disagree or none answered.
func agreedLeader(t Truth) string {
	var leader uint64
	for _, p := range t.Pods {
		switch {
		case p.Error != "":
		case p.Leader == 0 || (leader != 0 && p.Leader != leader):
			return ""
		default:
			leader = p.Leader
		}
	}
	if leader == 0 {
		return ""
	}
	for _, m := range t.Members {
		if m.ID == leader && m.Name != "" {
			return m.Name
		}
	}
	return fmt.Sprintf("%x", leader)
}

// difference is what a holds that b does not.
func difference(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// slowProbe records a ground truth that took longer than slowGroundTruth,
// with how long each member took to answer each question: the suite's own
// cost inside a timed figure, shown where it happened.
func (m *membershipWatch) slowProbe(began time.Time, took time.Duration, answers []*memberAnswer) {
	parts := make([]string, 0, len(answers))
	for _, a := range answers {
		parts = append(parts, a.truth.Pod+": "+strings.Join(a.steps, ", "))
	}
	m.record(report.Event{Time: began, Source: report.SourceSuite, Object: m.object, Reason: "SlowGroundTruth",
		Message: fmt.Sprintf("the suite's ground-truth probe took %.1f s (%s)", took.Seconds(), strings.Join(parts, "; ")),
		Level:   report.LevelNormal})
}
