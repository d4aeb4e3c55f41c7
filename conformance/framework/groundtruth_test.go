package framework

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	healthy := func() Truth {
		return Truth{
			Pods: []PodTruth{
				{Pod: "a", MemberID: 1, Leader: 1, Version: "3.6.5", Hash: 7},
				{Pod: "b", MemberID: 2, Leader: 1, Version: "3.6.5", Hash: 7},
				{Pod: "c", MemberID: 3, Leader: 1, Version: "3.6.5", Hash: 7},
			},
			Members: []Member{{ID: 1, Name: "a", Started: true}, {ID: 2, Name: "b", Started: true}, {ID: 3, Name: "c", Started: true}},
			Claims:  Claims{Phase: "Running", ReadyMembers: 3, CurrentVersion: "3.6.5"},
		}
	}
	want := Want{Size: 3, Version: "3.6.5"}
	cases := []struct {
		name   string
		mutate func(*Truth)
		expect []string
	}{
		{name: "healthy", mutate: func(*Truth) {}},
		{name: "dead member left in the list", mutate: func(t *Truth) {
			t.Members = append(t.Members, Member{ID: 9, Name: "old"})
		}, expect: []string{ProblemMembers, ProblemStaleMember + ": 9"}},
		{name: "learner never promoted", mutate: func(t *Truth) { t.Members[2].IsLearner = true }, expect: []string{ProblemLearner}},
		{name: "split leadership", mutate: func(t *Truth) { t.Pods[2].Leader = 3 }, expect: []string{ProblemLeader}},
		{name: "no leader", mutate: func(t *Truth) {
			for i := range t.Pods {
				t.Pods[i].Leader = 0
			}
		}, expect: []string{ProblemLeader}},
		{name: "diverged data", mutate: func(t *Truth) { t.Pods[1].Hash = 8 }, expect: []string{ProblemHash}},
		{name: "one member on the old version", mutate: func(t *Truth) { t.Pods[0].Version = "3.5.21" }, expect: []string{ProblemVersion + ": a runs etcd 3.5.21"}},
		{name: "status claims more than etcd", mutate: func(t *Truth) { t.Pods[2].Error = "refused" }, expect: []string{ProblemStaleMember, ProblemClaims + ": status says 3 ready members, etcd answers on 2"}},
		{name: "status claims an old version", mutate: func(t *Truth) { t.Claims.CurrentVersion = "3.5.21" }, expect: []string{ProblemClaims + ": status says version 3.5.21"}},
		// Before, a claim never made was never compared: 0 ready members and
		// no currentVersion passed "ground truth agrees with CR status".
		{name: "status never filled in", mutate: func(t *Truth) {
			t.Claims = Claims{Phase: "Running", Unfilled: []string{"readyMembers (status.members.ready)", "currentVersion (status.currentVersion)"}}
		}, expect: []string{ProblemClaims + ": status fields the profile names are missing or zero while etcd answers on 3 members: readyMembers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := healthy()
			tc.mutate(&tr)
			got := tr.judge(want)
			if len(got) != len(tc.expect) {
				t.Fatalf("problems = %q, want %d matching %q", got, len(tc.expect), tc.expect)
			}
			for i, e := range tc.expect {
				if !strings.HasPrefix(got[i], e) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], e)
				}
			}
		})
	}
}

// A member's status lists the cluster's alarms among its errors; a full
// backend is no unhealthy member (the space check failed waiting for a
// whole cluster under NOSPACE before this).
func TestStatusAlarmsAreNoMemberErrors(t *testing.T) {
	errs, alarms := splitAlarms([]string{"memberID:13931000787856792015 alarm:NOSPACE ", "memberID:4004802868319336962 alarm:NOSPACE ", "raft: not started"})
	if len(errs) != 1 || errs[0] != "raft: not started" || len(alarms) != 2 {
		t.Errorf("errors %q, alarms %q", errs, alarms)
	}
}
