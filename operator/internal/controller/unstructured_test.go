package controller_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// toUnstructured lets a test send fields the typed client would omit (an
// explicitly empty repository).
func toUnstructured(t *testing.T, c *etcdv1beta2.EtcdCluster) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(etcdv1beta2.GroupVersion.WithKind("EtcdCluster"))
	return u
}

func setNested(u *unstructured.Unstructured, value string, fields ...string) error {
	return unstructured.SetNestedField(u.Object, value, fields...)
}
