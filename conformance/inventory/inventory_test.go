package inventory

import (
	"strings"
	"testing"
)

func TestLeftovers(t *testing.T) {
	before := Snapshot{Objects: []Object{
		{Resource: "namespaces", Name: "default", UID: "1"},
		{Resource: "configmaps", Namespace: "default", Name: "kube-root-ca.crt", UID: "2"},
		{Resource: "pods", Namespace: "kube-system", Name: "etcd-node", UID: "7", Mirror: true},
		{Resource: "pods", Namespace: "kube-system", Name: "kube-proxy-x", UID: "10"},
	}}
	after := Snapshot{Objects: []Object{
		{Resource: "namespaces", Name: "default", UID: "1"},
		{Resource: "configmaps", Namespace: "default", Name: "kube-root-ca.crt", UID: "2"},
		// Same name, new UID: recreated, so it is a leftover of the run.
		{Resource: "persistentvolumeclaims", Namespace: "default", Name: "data-a-1", UID: "3"},
		{Resource: "persistentvolumes", Name: "pvc-3", UID: "4"},
		{Resource: "events", Namespace: "default", Name: "a.1", UID: "5"},
		{Resource: "customresourcedefinitions.apiextensions.k8s.io", Name: "etcdclusters.etcd.database.coreos.com", UID: "6"},
		// The kubelet recreated its mirror pod of a static pod: not the run's.
		{Resource: "pods", Namespace: "kube-system", Name: "etcd-node", UID: "8", Mirror: true},
		// Nor is one the kubelet had deleted when the first snapshot was taken.
		{Resource: "pods", Namespace: "kube-system", Name: "kube-scheduler-node", UID: "11", Mirror: true},
		// An ordinary pod recreated under its old name is a new object.
		{Resource: "pods", Namespace: "kube-system", Name: "kube-proxy-x", UID: "9"},
	}}
	var got []string
	for _, o := range Leftovers(before, after, DefaultExclusions) {
		got = append(got, o.String())
	}
	want := "customresourcedefinitions.apiextensions.k8s.io etcdclusters.etcd.database.coreos.com\npersistentvolumeclaims default/data-a-1\npersistentvolumes pvc-3\npods kube-system/kube-proxy-x"
	if strings.Join(got, "\n") != want {
		t.Errorf("leftovers:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if l := Leftovers(after, after, nil); len(l) != 0 {
		t.Errorf("identical snapshots left %v", l)
	}
}
