package inventory

import (
	"strings"
	"testing"
)

func TestLeftovers(t *testing.T) {
	before := Snapshot{Objects: []Object{
		{Resource: "namespaces", Name: "default", UID: "1"},
		{Resource: "configmaps", Namespace: "default", Name: "kube-root-ca.crt", UID: "2"},
	}}
	after := Snapshot{Objects: []Object{
		{Resource: "namespaces", Name: "default", UID: "1"},
		{Resource: "configmaps", Namespace: "default", Name: "kube-root-ca.crt", UID: "2"},
		// Same name, new UID: recreated, so it is a leftover of the run.
		{Resource: "persistentvolumeclaims", Namespace: "default", Name: "data-a-1", UID: "3"},
		{Resource: "persistentvolumes", Name: "pvc-3", UID: "4"},
		{Resource: "events", Namespace: "default", Name: "a.1", UID: "5"},
		{Resource: "customresourcedefinitions.apiextensions.k8s.io", Name: "etcdclusters.etcd.database.coreos.com", UID: "6"},
	}}
	var got []string
	for _, o := range Leftovers(before, after, DefaultExclusions) {
		got = append(got, o.String())
	}
	want := "customresourcedefinitions.apiextensions.k8s.io etcdclusters.etcd.database.coreos.com\npersistentvolumeclaims default/data-a-1\npersistentvolumes pvc-3"
	if strings.Join(got, "\n") != want {
		t.Errorf("leftovers:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if l := Leftovers(after, after, nil); len(l) != 0 {
		t.Errorf("identical snapshots left %v", l)
	}
}
