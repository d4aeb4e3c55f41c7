package specs

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/framework"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

func truthOf(names ...string) framework.Truth {
	var t framework.Truth
	for i, n := range names {
		t.Members = append(t.Members, framework.Member{ID: uint64(i + 1), Name: n, Started: n != ""})
	}
	return t
}

// What etcd's member list lost and gained is what the operator's Events
// must name; a member not started yet has no name to name.
func TestMemberChanges(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after framework.Truth
		lost, gained  string
	}{
		{"replaced under a new name", truthOf("c-a", "c-b", "c-c"), truthOf("c-a", "c-c", "c-d"), "c-b", "c-d"},
		{"brought back in place", truthOf("c-a", "c-b", "c-c"), truthOf("c-c", "c-a", "c-b"), "", ""},
		{"removed, its replacement not started yet", truthOf("c-a", "c-b", "c-c"), truthOf("c-a", "c-c", ""), "c-b", ""},
	} {
		lost, gained := memberChanges(tc.before, tc.after)
		if strings.Join(lost, ",") != tc.lost || strings.Join(gained, ",") != tc.gained {
			t.Errorf("%s: lost %v gained %v, want %q %q", tc.name, lost, gained, tc.lost, tc.gained)
		}
	}
}

// clusterEvent is an Event on cluster demo as the API lists it: a core/v1
// one has whole-second times, an events.k8s.io one an eventTime and maybe
// a related object.
func clusterEvent(kind, name, reason, message string, at time.Time) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name},
		Reason:         reason, Message: message,
		LastTimestamp: metav1.NewTime(at.Truncate(time.Second)),
	}
}

// The Event must be on the cluster's CR, no older than the deletion that
// made the operator act (to the API's second), and name a member etcd's
// list really lost or gained, as a whole name.
func TestEventsNamingMembers(t *testing.T) {
	deleted := time.Date(2026, 12, 8, 10, 0, 0, 700e6, time.UTC)
	after := deleted.Add(3 * time.Second)
	related := clusterEvent("", "", "", "", time.Time{})
	related.InvolvedObject = corev1.ObjectReference{Kind: "EtcdCluster", Name: "demo"}
	related.Reason, related.Message = "Member Defragmented", "freed 12 MiB"
	related.EventTime = metav1.NewMicroTime(after)
	related.Related = &corev1.ObjectReference{Kind: "Pod", Name: "demo-b"}
	for _, tc := range []struct {
		name  string
		event corev1.Event
		match bool
	}{
		{"coreos' replacement Event", clusterEvent("EtcdCluster", "demo", "Replacing Dead Member", "The dead member demo-b is being replaced", after), true},
		{"the new member added", clusterEvent("EtcdCluster", "demo", "New Member Added", "New member demo-d added to cluster", after), true},
		{"a name ending a sentence", clusterEvent("EtcdCluster", "demo", "Member Removed", "Removed demo-b.", after), true},
		{"in the same second as the deletion", clusterEvent("EtcdCluster", "demo", "Member Removed", "Existing member demo-b removed from the cluster", deleted), true},
		{"an events.k8s.io Event naming the member as related", related, true},
		{"the bootstrap's Event about the same member", clusterEvent("EtcdCluster", "demo", "New Member Added", "New member demo-b added to cluster", deleted.Add(-time.Minute)), false},
		{"a member that stayed", clusterEvent("EtcdCluster", "demo", "Leader Moved", "Leadership moved away from demo-a", after), false},
		{"a longer name that starts like the member's", clusterEvent("EtcdCluster", "demo", "New Member Added", "New member demo-bx added to cluster", after), false},
		{"on another cluster", clusterEvent("EtcdCluster", "demo2", "Replacing Dead Member", "The dead member demo-b is being replaced", after), false},
		{"on the member's pod (the kubelet's)", clusterEvent("Pod", "demo-b", "Killing", "Stopping container etcd", after), false},
		{"nothing about a member", clusterEvent("EtcdCluster", "demo", "Cluster Failed", "", after), false},
	} {
		got := eventsNaming([]corev1.Event{tc.event}, "EtcdCluster", "demo", deleted, []string{"demo-b", "demo-d"})
		if (len(got) == 1) != tc.match {
			t.Errorf("%s: matched %v, want %v", tc.name, len(got) == 1, tc.match)
		}
	}
}

const members = "etcd_operator_cluster_members"

var referenceSelector = profile.MetricSelector{Metric: members, Labels: map[string]string{"namespace": "ns", "cluster": "demo", "state": "ready"}}

// scraped is one operator pod's endpoint serving text.
func scraped(t *testing.T, pod, text string) framework.OperatorScrape {
	t.Helper()
	f, err := framework.ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return framework.OperatorScrape{Pod: pod, Families: f}
}

// The member metric agrees when its samples for the cluster sum to the
// members etcd lists, on every operator pod that serves any; a pod with
// none (a standby replica) says nothing; no sample at all, or another
// count, is a failure that says what was served.
func TestJudgeMemberMetric(t *testing.T) {
	const header = "# TYPE etcd_operator_cluster_members gauge\n"
	ready3 := header + `etcd_operator_cluster_members{namespace="ns",cluster="demo",state="ready"} 3
etcd_operator_cluster_members{namespace="ns",cluster="demo",state="unready"} 0
etcd_operator_cluster_members{namespace="ns",cluster="other",state="ready"} 5
`
	for _, tc := range []struct {
		name    string
		scrapes func(t *testing.T) []framework.OperatorScrape
		sel     profile.MetricSelector
		agrees  bool
		says    string
	}{
		{"the reference, whole", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", ready3)}
		}, referenceSelector, true, `etcd_operator_cluster_members{cluster="demo",namespace="ns",state="ready"} = 3 on operator pod op-1; etcd lists 3 members`},
		{"every state summed", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", ready3)}
		}, profile.MetricSelector{Metric: members, Labels: map[string]string{"cluster": "demo"}}, true, "= 3 on operator pod op-1 (2 series)"},
		{"a standby replica serves none", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", ready3), scraped(t, "op-2", "# TYPE go_goroutines gauge\ngo_goroutines 40\n")}
		}, referenceSelector, true, "= 3 on operator pod op-1"},
		{"one member short", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", strings.Replace(ready3, `state="ready"} 3`, `state="ready"} 2`, 1))}
		}, referenceSelector, false, "= 2 on operator pod op-1, but etcd lists 3 members"},
		{"no series for the cluster (silent)", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", header+`etcd_operator_cluster_members{namespace="ns",cluster="other",state="ready"} 3`+"\n")}
		}, referenceSelector, false, `operator pod op-1 serves no etcd_operator_cluster_members{cluster="demo",namespace="ns",state="ready"} (1 etcd_operator_cluster_members series, none with those labels)`},
		{"no such metric at all", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", "# TYPE go_goroutines gauge\ngo_goroutines 40\n")}
		}, referenceSelector, false, "operator pod op-1 serves no etcd_operator_cluster_members{cluster=\"demo\",namespace=\"ns\",state=\"ready\"} (1 metrics, none named etcd_operator_cluster_members)"},
		{"the endpoint does not answer", func(*testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{{Pod: "op-1", Err: errors.New("GET /metrics: EOF")}}
		}, referenceSelector, false, "operator pod op-1: GET /metrics: EOF"},
		{"two pods that disagree", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", ready3), scraped(t, "op-2", strings.Replace(ready3, `state="ready"} 3`, `state="ready"} 4`, 1))}
		}, referenceSelector, false, "= 4 on operator pod op-2, but etcd lists 3 members"},
		{"a histogram has no one value", func(t *testing.T) []framework.OperatorScrape {
			return []framework.OperatorScrape{scraped(t, "op-1", "# TYPE etcd_operator_cluster_members histogram\n"+
				`etcd_operator_cluster_members_bucket{cluster="demo",le="+Inf"} 1`+"\n"+
				`etcd_operator_cluster_members_sum{cluster="demo"} 3`+"\n"+
				`etcd_operator_cluster_members_count{cluster="demo"} 1`+"\n")}
		}, profile.MetricSelector{Metric: members, Labels: map[string]string{"cluster": "demo"}}, false, "is a HISTOGRAM, not a gauge, counter or untyped value"},
	} {
		agrees, says := judgeMemberMetric(tc.scrapes(t), tc.sel, 3)
		if agrees != tc.agrees || !strings.Contains(says, tc.says) {
			t.Errorf("%s: agrees %v, %q; want %v, %q", tc.name, agrees, says, tc.agrees, tc.says)
		}
	}
}
