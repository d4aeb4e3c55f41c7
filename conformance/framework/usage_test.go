package framework

import (
	"encoding/json"
	"testing"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// summaryJSON is a trimmed /stats/summary as a kubelet serves it.
const summaryJSON = `{
 "node": {"nodeName": "kind-worker", "startTime": "2026-12-04T13:00:00Z",
  "memory": {"time": "2026-12-04T14:00:00Z", "workingSetBytes": 900000000, "rssBytes": 800000000}},
 "pods": [
  {"podRef": {"name": "etcd-operator-7d9c", "namespace": "etcd-operator", "uid": "u1"},
   "startTime": "2026-12-04T13:01:00Z",
   "containers": [
    {"name": "manager", "startTime": "2026-12-04T13:01:02Z",
     "memory": {"time": "2026-12-04T14:00:00Z", "usageBytes": 40000000, "workingSetBytes": 30000000, "rssBytes": 20000000, "pageFaults": 10, "majorPageFaults": 0}},
    {"name": "kube-rbac-proxy", "startTime": "2026-12-04T13:01:02Z",
     "memory": {"time": "2026-12-04T14:00:00Z", "workingSetBytes": 5000000}},
    {"name": "starting", "startTime": "2026-12-04T13:01:02Z"}
   ]},
  {"podRef": {"name": "etcd-operator-old", "namespace": "etcd-operator", "uid": "u2"},
   "startTime": "2026-12-04T13:01:00Z",
   "containers": [{"name": "manager", "memory": {"workingSetBytes": 1, "rssBytes": 1}}]},
  {"podRef": {"name": "etcd-operator-7d9c", "namespace": "other", "uid": "u3"},
   "startTime": "2026-12-04T13:01:00Z",
   "containers": [{"name": "manager", "memory": {"workingSetBytes": 7, "rssBytes": 7}}]},
  {"podRef": {"name": "etcd-operator-new", "namespace": "etcd-operator", "uid": "u4"},
   "startTime": "2026-12-04T13:01:00Z",
   "containers": [{"name": "manager"}]}
 ]
}`

func TestPodsMemory(t *testing.T) {
	var s statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(summaryJSON), &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		pods      []string
		rss, ws   uint64
		wantFound bool
	}{
		{"rss and working set summed over containers", []string{"etcd-operator-7d9c"}, 20000000, 35000000, true},
		{"summed over pods", []string{"etcd-operator-7d9c", "etcd-operator-old"}, 20000001, 35000001, true},
		{"no memory statistics yet", []string{"etcd-operator-new"}, 0, 0, false},
		{"not on this node", []string{"etcd-operator-gone"}, 0, 0, false},
	}
	for _, tt := range tests {
		names := map[string]bool{}
		for _, n := range tt.pods {
			names[n] = true
		}
		rss, ws, found := podsMemory(s, "etcd-operator", names)
		if rss != tt.rss || ws != tt.ws || found != tt.wantFound {
			t.Errorf("%s: podsMemory = %d, %d, %v; want %d, %d, %v", tt.name, rss, ws, found, tt.rss, tt.ws, tt.wantFound)
		}
	}
}
