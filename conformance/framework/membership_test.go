package framework

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// truthOf is a probe where every listed pod answers and names leader.
func truthOf(leader uint64, members ...Member) Truth {
	t := Truth{Members: members}
	for _, m := range members {
		t.Pods = append(t.Pods, PodTruth{Pod: m.Name, MemberID: m.ID, Leader: leader})
	}
	return t
}

func TestMembershipWatchRecordsWhatEtcdSaidChanged(t *testing.T) {
	var got []string
	w := &membershipWatch{object: "etcdcluster/replace-1", record: func(ev report.Event) {
		if ev.Source != report.SourceEtcd || ev.Object != "etcdcluster/replace-1" {
			t.Errorf("event %+v", ev)
		}
		got = append(got, ev.Reason+": "+ev.Message)
	}}
	a, b, c, d := Member{ID: 0xa, Name: "a"}, Member{ID: 0xb, Name: "b"}, Member{ID: 0xc, Name: "c"}, Member{ID: 0xd}
	disagree := truthOf(0xa, a, b, c)
	disagree.Pods[2].Leader = 0xb
	unreachable := truthOf(0xb, b, c)
	unreachable.Members, unreachable.Pods[0].Error = nil, "context deadline exceeded"
	for _, probe := range []Truth{
		truthOf(0xa, a, b, c),
		truthOf(0xa, a, b, c), // nothing new
		disagree,              // an election going on: no leader to name
		truthOf(0xb, b, c),    // a removed, b leads
		unreachable,           // nothing listed: nothing known
		truthOf(0xb, b, c, d), // a member added, not started yet
	} {
		w.observe(probe, time.Now())
	}
	want := []string{
		"Members: members a, b, c; leader a",
		"MembersChanged: removed a: members b, c",
		"LeaderChanged: leader a → b",
		"MembersChanged: added d (not started): members b, c, d (not started)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
