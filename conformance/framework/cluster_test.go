package framework

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestRESTMapping(t *testing.T) {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true},
			{Name: "pods/status", Kind: "Pod", Namespaced: true},
			{Name: "services", Kind: "Service", Namespaced: true},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true},
			{Name: "deployments/scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Namespaced: true},
		}},
		{GroupVersion: "policy/v1beta1", APIResources: []metav1.APIResource{
			{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true},
		}},
	}}}
	e := &Env{mapper: newMapper(disc)}
	ctx := context.Background()
	tests := []struct {
		gvk     schema.GroupVersionKind
		want    schema.GroupVersionResource
		wantErr bool
	}{
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, want: schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, want: schema.GroupVersionResource{Version: "v1", Resource: "services"}},
		{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, want: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		// Only the version asked for: policy/v1 is not served here.
		{gvk: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, wantErr: true},
		{gvk: schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"}, want: schema.GroupVersionResource{Group: "policy", Version: "v1beta1", Resource: "poddisruptionbudgets"}},
		// A subresource's kind is no resource of its own.
		{gvk: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, wantErr: true},
		{gvk: schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := e.restMapping(ctx, tt.gvk)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "does not serve kind") {
				t.Errorf("restMapping(%s) = %v, %v; want a 'does not serve kind' error", tt.gvk, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("restMapping(%s) = %v, %v; want %v", tt.gvk, got, err, tt.want)
		}
	}

	// A kind installed after the first lookup (a CRD from an install step)
	// is found: the cached discovery is read again on a miss.
	disc.Resources = append(disc.Resources, &metav1.APIResourceList{GroupVersion: "etcd.database.coreos.com/v1beta2", APIResources: []metav1.APIResource{
		{Name: "etcdclusters", Kind: "EtcdCluster", Namespaced: true},
	}})
	gvk := schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}
	want := schema.GroupVersionResource{Group: "etcd.database.coreos.com", Version: "v1beta2", Resource: "etcdclusters"}
	if got, err := e.restMapping(ctx, gvk); err != nil || got != want {
		t.Errorf("restMapping(%s) after install = %v, %v; want %v", gvk, got, err, want)
	}
}
