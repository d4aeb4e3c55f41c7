// Package v1beta2 contains the EtcdCluster API (etcd.database.coreos.com/v1beta2),
// wire-compatible with the CR that coreos etcd-operator v0.9.4 accepted.
// +kubebuilder:object:generate=true
// +groupName=etcd.database.coreos.com
package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "etcd.database.coreos.com", Version: "v1beta2"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
