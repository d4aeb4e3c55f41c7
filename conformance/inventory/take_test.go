package inventory

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// fakeDiscovery serves fixed lists, and an error like a failed aggregated API.
type fakeDiscovery struct {
	discoveryfake.FakeDiscovery
	lists []*metav1.APIResourceList
	err   error
}

func (f *fakeDiscovery) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return f.lists, f.err
}

func obj(apiVersion, kind, ns, name, uid string, extra map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, v := range extra {
		u.Object[k] = v
	}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(k8stypes.UID(uid))
	return u
}

func TestTakeRecordsWhatItCannotList(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Verbs: []string{"list"}},
			{Name: "persistentvolumes", Verbs: []string{"list"}},
			{Name: "persistentvolumeclaims", Namespaced: true, Verbs: []string{"list"}},
			{Name: "pods", Namespaced: true, Verbs: []string{"list"}},
			{Name: "pods/log", Namespaced: true, Verbs: []string{"get"}},
			{Name: "bindings", Namespaced: true, Verbs: []string{"create"}},
		}},
		{GroupVersion: "networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "ipaddresses", Verbs: []string{"list"}}}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "backups", Namespaced: true, Verbs: []string{"list"}}}},
	}
	disc := &fakeDiscovery{lists: lists, err: &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		{Group: "metrics.k8s.io", Version: "v1beta1"}: errors.New("the server is currently unable to handle the request"),
	}}}
	pvc := obj("v1", "PersistentVolumeClaim", "a", "data", "pvc", nil)
	pod := obj("v1", "Pod", "a", "p-1", "pod", nil)
	pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "p", UID: "rs", Controller: ptr.To(true)}})
	other := obj("v1", "Pod", "b", "q", "pod-b", nil)
	pv := obj("v1", "PersistentVolume", "", "pvc-1", "pv", map[string]any{"spec": map[string]any{"claimRef": map[string]any{"namespace": "a", "name": "data"}}})
	ns := obj("v1", "Namespace", "", "a", "ns-a", nil)
	ip := obj("networking.k8s.io/v1", "IPAddress", "", "10.96.0.57", "ip", map[string]any{"spec": map[string]any{"parentRef": map[string]any{"group": "", "resource": "services", "namespace": "a", "name": "web"}}})
	listKinds := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "namespaces"}:                              "NamespaceList",
		{Version: "v1", Resource: "persistentvolumes"}:                       "PersistentVolumeList",
		{Version: "v1", Resource: "persistentvolumeclaims"}:                  "PersistentVolumeClaimList",
		{Version: "v1", Resource: "pods"}:                                    "PodList",
		{Group: "example.com", Version: "v1", Resource: "backups"}:           "BackupList",
		{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"}: "IPAddressList",
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, pvc, pod, other, pv, ns, ip)
	dyn.PrependReactor("list", "backups", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("conversion webhook unavailable")
	})

	snap, err := Take(context.Background(), disc, dyn)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range snap.Objects {
		var of string
		if o.For != nil {
			of = o.For.String()
		}
		got = append(got, o.String()+" owner="+o.Owner+" for="+of)
	}
	want := "namespaces a owner= for=;persistentvolumes pvc-1 owner= for=persistentvolumeclaims a/data;persistentvolumeclaims a/data owner= for=;pods a/p-1 owner=rs for=;pods b/q owner= for=;ipaddresses.networking.k8s.io 10.96.0.57 owner= for=services a/web"
	if strings.Join(got, ";") != want {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, ";"), want)
	}
	var skipped []string
	for _, u := range snap.Skipped {
		skipped = append(skipped, u.String())
	}
	if strings.Join(skipped, ";") != "backups.example.com: conversion webhook unavailable;every resource of metrics.k8s.io/v1beta1: discovery: the server is currently unable to handle the request" {
		t.Errorf("skipped = %q", skipped)
	}

	snap, err = TakeNamespace(context.Background(), disc, dyn, "a")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, o := range snap.Objects {
		got = append(got, o.String())
	}
	if strings.Join(got, ";") != "persistentvolumeclaims a/data;pods a/p-1" {
		t.Errorf("namespace a: %v", got)
	}

	// Discovery that fails outright is an error, not an empty inventory.
	if _, err := Take(context.Background(), &fakeDiscovery{err: errors.New("connection refused")}, dyn); err == nil {
		t.Error("no error when discovery failed")
	}
}
