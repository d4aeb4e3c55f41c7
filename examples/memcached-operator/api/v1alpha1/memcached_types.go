package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of status.conditions.
const (
	// ConditionAvailable is True when every one of spec.size memcached pods
	// is ready to serve.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the Deployment is still moving
	// towards the spec: scaling, or rolling out a new pod template.
	ConditionProgressing = "Progressing"
)

// MemcachedSpec is the desired state of a memcached cluster.
type MemcachedSpec struct {
	// Size is the number of memcached pods. 0 keeps the Deployment but runs
	// no pod.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	Size int32 `json:"size"`
}

// MemcachedStatus is the observed state of a memcached cluster.
type MemcachedStatus struct {
	// Nodes are the names of the memcached pods, sorted.
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// Conditions are Available and Progressing.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Memcached is a memcached cluster run by the operator: a Deployment of
// spec.size pods.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemcachedSpec   `json:"spec"`
	Status MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcached.
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Memcached{}, &MemcachedList{})
}
