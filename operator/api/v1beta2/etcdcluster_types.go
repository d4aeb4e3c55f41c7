package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultRepository is where member images come from unless spec.repository says otherwise.
const DefaultRepository = "quay.io/coreos/etcd"

// The rule on spec.TLS itself only sees changes of a TLS that was and stays
// set; adding or removing it is refused here.
// +kubebuilder:validation:XValidation:rule="has(self.TLS) == has(oldSelf.TLS)",message="spec.TLS cannot be added to or removed from an existing cluster (members keep the URLs and certificates they started with); create a new cluster to change it"
// Likewise the rule on the claim spec itself only sees changes of a claim
// spec that was and stays set; removing it (or spec.pod) is refused here.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.pod) || !has(oldSelf.pod.persistentVolumeClaimSpec) || (has(self.pod) && has(self.pod.persistentVolumeClaimSpec))",message="spec.pod.persistentVolumeClaimSpec cannot be removed once set: the members' data is on their PersistentVolumeClaims, and without it a member whose pod is lost would start empty; create a new cluster to run on emptyDir"

// EtcdClusterSpec is the desired state of an etcd cluster.
type EtcdClusterSpec struct {
	// Size is the number of etcd members, at most 7: etcd's guidance is 3,
	// 5 or 7 (each member more adds replication work to every write, and 7
	// already survives the loss of 3). An even size tolerates no more lost
	// members than the odd size below it; the operator warns about one.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="spec.size must be at least 1 (the number of etcd members)"
	// +kubebuilder:validation:XValidation:rule="self <= 7",message="spec.size must be at most 7: etcd recommends 3, 5 or 7 members; more slow down every write and add no useful fault tolerance"
	Size int `json:"size"`

	// Repository is the image repository of the member image; the image is
	// <repository>:v<version>.
	// +kubebuilder:default="quay.io/coreos/etcd"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.size() > 0",message="spec.repository must not be empty (for example quay.io/coreos/etcd)"
	// +optional
	Repository string `json:"repository,omitempty"`

	// Version is the etcd version (semantic version without the leading v, for example 3.5.36).
	// The default is the newest 3.5 patch release built here; 3.6 may be
	// reached from it (etcd's upgrade guide asks for 3.5.32 or later first).
	// +kubebuilder:default="3.5.36"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')",message="spec.version must be a semantic version such as 3.5.21 (not \"latest\" or \"3.x\")"
	// +optional
	Version string `json:"version,omitempty"`

	// Paused stops every change the operator would make to this cluster.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Pod shapes the member pods.
	// +optional
	Pod *PodPolicy `json:"pod,omitempty"`

	// TLS secures the members' peer and client traffic with certificates
	// from Secrets (coreos etcd-operator's spec.TLS, with its capital field
	// name). It cannot be changed once the cluster exists: the members run
	// with the URLs and certificates they were started with, and etcd offers
	// no way to switch a running member between http and https (coreos did
	// not support changing it either).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.TLS cannot be changed once the cluster exists (members keep the URLs and certificates they started with); create a new cluster to change it"
	// +optional
	TLS *TLSPolicy `json:"TLS,omitempty"`
}

// PodPolicy is the part of the member pods a user may shape.
type PodPolicy struct {
	// Labels are added to every member pod (app and etcd_cluster cannot be overridden).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to every member pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// NodeSelector constrains the nodes member pods run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// AntiAffinity keeps members of one cluster off the same node.
	// +optional
	AntiAffinity bool `json:"antiAffinity,omitempty"`
	// Affinity is the member pods' affinity; it wins over AntiAffinity.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Resources of the etcd container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Tolerations of the member pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// EtcdEnv is added to the etcd container's environment.
	// +optional
	EtcdEnv []corev1.EnvVar `json:"etcdEnv,omitempty"`
	// SecurityContext of the member pods.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	// PersistentVolumeClaimSpec, when set, gives every member a PVC for its data
	// so a restarted member keeps its data; without it members use emptyDir.
	// Once set it can neither change nor go: the running members' data is on
	// claims made from it. It can be added only before the cluster first runs
	// (see EtcdCluster).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.pod.persistentVolumeClaimSpec cannot be changed once set: the running members keep the claims they were made with, and new members must get the same; create a new cluster to change it"
	// +optional
	PersistentVolumeClaimSpec *corev1.PersistentVolumeClaimSpec `json:"persistentVolumeClaimSpec,omitempty"`
	// BusyboxImage is accepted for compatibility with coreos etcd-operator and ignored.
	// +optional
	BusyboxImage string `json:"busyboxImage,omitempty"`
}

// ClusterPhase is the coarse state of a cluster.
// +kubebuilder:validation:Enum="";Creating;Running;Failed
type ClusterPhase string

// Phases, as coreos etcd-operator named them.
const (
	PhaseNone     ClusterPhase = ""
	PhaseCreating ClusterPhase = "Creating"
	PhaseRunning  ClusterPhase = "Running"
	PhaseFailed   ClusterPhase = "Failed"
)

// MembersStatus lists member names by readiness.
type MembersStatus struct {
	// Ready members: pod ready and etcd answering.
	// +optional
	Ready []string `json:"ready,omitempty"`
	// Unready members.
	// +optional
	Unready []string `json:"unready,omitempty"`
}

// EtcdClusterStatus is the observed state of an etcd cluster.
type EtcdClusterStatus struct {
	// Phase is Creating until every member first becomes ready, then Running;
	// Failed when the cluster cannot be recovered without a person.
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`
	// Reason explains the phase or the latest refusal in words.
	// +optional
	Reason string `json:"reason,omitempty"`
	// ControlPaused mirrors spec.paused once the operator has seen it.
	// +optional
	ControlPaused bool `json:"controlPaused,omitempty"`
	// Conditions: Available, Scaling, Recovering, Upgrading.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Size is the number of members in etcd's membership.
	// +optional
	Size int `json:"size"`
	// ReadyMembers is "<ready>/<desired>", for people.
	// +optional
	ReadyMembers string `json:"readyMembers,omitempty"`
	// ServiceName is the client Service.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// ClientPort is the client port of ServiceName.
	// +optional
	ClientPort int `json:"clientPort,omitempty"`
	// Members by readiness.
	// +optional
	Members MembersStatus `json:"members,omitempty"`
	// CurrentVersion is the lowest version a healthy member runs; a member
	// that does not answer (its pod not started yet, crashing, or gone)
	// counts with the version reported before. So a release that never runs
	// healthily is never the current version, and spec.version can always be
	// set back to this one.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`
	// TargetVersion is the version being rolled out, empty when none is.
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`
	// UnpulledImage is the image of spec.version that a member could not pull
	// in time: the member went back to its previous version and the upgrade
	// is held (Upgrading is False, ImageNotPulled) while spec.version names it.
	// +optional
	UnpulledImage string `json:"unpulledImage,omitempty"`
	// UnhealthyImage is the image of spec.version that a member did not
	// become healthy on in time (its etcd kept exiting): the member went back
	// to its previous version and the upgrade is held (Upgrading is False,
	// NewVersionUnhealthy) while spec.version names it.
	// +optional
	UnhealthyImage string `json:"unhealthyImage,omitempty"`
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// The scale subresource (spec.size, status.size) makes `kubectl scale` work.
// The cluster's PodDisruptionBudget does not use it: its minAvailable is
// counted from the voters etcd lists.
//
// The transition rules refuse a spec.version that etcd cannot reach from the
// version the members run: lower (a downgrade), more than one minor release
// higher, or 3.6 from a 3.5 patch older than etcd's upgrade guide allows
// (3.5.32, plan.MinorUpgradeFloors). They compare with
// status.currentVersion, and with the previous spec.version before the
// operator has reported one, which is what the operator itself refuses
// (plan.CheckVersionChange; both sides are tested on one table,
// plan.VersionChanges). So spec.version can always be set back to
// status.currentVersion, which aborts a rollout, or rolls back a patch
// release members did not become healthy on (it never becomes current). An
// update that keeps spec.version (a status write, a scale) is never refused
// for it. The rules sit on the root type because only there can they see
// oldSelf.status.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || !(has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || int(self.spec.version.split('.')[0]) > int(oldSelf.status.currentVersion.split('.')[0]) || (int(self.spec.version.split('.')[0]) == int(oldSelf.status.currentVersion.split('.')[0]) && (int(self.spec.version.split('.')[1]) > int(oldSelf.status.currentVersion.split('.')[1]) || (int(self.spec.version.split('.')[1]) == int(oldSelf.status.currentVersion.split('.')[1]) && int(self.spec.version.split('.')[2].split('-')[0]) >= int(oldSelf.status.currentVersion.split('.')[2].split('-')[0]))))",message="downgrade refused: spec.version may not be lower than status.currentVersion, the version the members run (etcd does not support downgrades)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || (has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || !oldSelf.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || int(self.spec.version.split('.')[0]) > int(oldSelf.spec.version.split('.')[0]) || (int(self.spec.version.split('.')[0]) == int(oldSelf.spec.version.split('.')[0]) && (int(self.spec.version.split('.')[1]) > int(oldSelf.spec.version.split('.')[1]) || (int(self.spec.version.split('.')[1]) == int(oldSelf.spec.version.split('.')[1]) && int(self.spec.version.split('.')[2].split('-')[0]) >= int(oldSelf.spec.version.split('.')[2].split('-')[0]))))",message="downgrade refused: spec.version may not be lower than the previous version (etcd does not support downgrades)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || !(has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || int(self.spec.version.split('.')[0]) < int(oldSelf.status.currentVersion.split('.')[0]) || (int(self.spec.version.split('.')[0]) == int(oldSelf.status.currentVersion.split('.')[0]) && int(self.spec.version.split('.')[1]) <= int(oldSelf.status.currentVersion.split('.')[1]) + 1)",message="version skew refused: upgrade one minor release at a time from status.currentVersion, the version the members run (for example 3.4 -> 3.5 -> 3.6)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || (has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || !oldSelf.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || int(self.spec.version.split('.')[0]) < int(oldSelf.spec.version.split('.')[0]) || (int(self.spec.version.split('.')[0]) == int(oldSelf.spec.version.split('.')[0]) && int(self.spec.version.split('.')[1]) <= int(oldSelf.spec.version.split('.')[1]) + 1)",message="version skew refused: upgrade one minor release at a time (for example 3.4 -> 3.5 -> 3.6)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || !(has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || !(int(self.spec.version.split('.')[0]) == 3 && int(self.spec.version.split('.')[1]) == 6 && int(oldSelf.status.currentVersion.split('.')[0]) == 3 && int(oldSelf.status.currentVersion.split('.')[1]) == 5 && int(oldSelf.status.currentVersion.split('.')[2].split('-')[0]) < 32)",message="upgrade to 3.6 refused: etcd's upgrade guide asks every member to run 3.5.32 or a later 3.5 patch first, and status.currentVersion, the version the members run, is older; set spec.version to 3.5.32 or later, then to 3.6"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(oldSelf.spec) || !has(self.spec.version) || !has(oldSelf.spec.version) || self.spec.version == oldSelf.spec.version || !self.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || (has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$')) || !oldSelf.spec.version.matches('^[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?$') || !(int(self.spec.version.split('.')[0]) == 3 && int(self.spec.version.split('.')[1]) == 6 && int(oldSelf.spec.version.split('.')[0]) == 3 && int(oldSelf.spec.version.split('.')[1]) == 5 && int(oldSelf.spec.version.split('.')[2].split('-')[0]) < 32)",message="upgrade to 3.6 refused: etcd's upgrade guide asks every member to run 3.5.32 or a later 3.5 patch first, and the previous version is older; set spec.version to 3.5.32 or later, then to 3.6"
//
// spec.pod.persistentVolumeClaimSpec may be added only to a cluster that has
// not run yet (its phase is neither Running nor Failed): the members of one
// that ran keep their data on emptyDir, and the next restart in place (an
// upgrade, a policy roll) would bring such a member back on a new, empty
// claim. Adding it before the first run is what a cluster waiting beside an
// earlier cluster's claims (ClaimsWithoutClaimSpec) asks for.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.pod) || !has(self.spec.pod.persistentVolumeClaimSpec) || (has(oldSelf.spec) && has(oldSelf.spec.pod) && has(oldSelf.spec.pod.persistentVolumeClaimSpec)) || !has(oldSelf.status) || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Running', 'Failed'])",message="spec.pod.persistentVolumeClaimSpec cannot be added to a cluster that has run on emptyDir: a member restarted onto a new, empty claim would lose its data; create a new cluster with claims (or restore a backup into one)"
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.size

// EtcdCluster is an etcd cluster managed by the operator.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=etcdclusters,singular=etcdcluster,shortName=etcd
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.currentVersion`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.readyMembers`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EtcdCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EtcdClusterSpec   `json:"spec,omitempty"`
	Status EtcdClusterStatus `json:"status,omitempty"`
}

// EtcdClusterList is a list of EtcdCluster.
// +kubebuilder:object:root=true
type EtcdClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EtcdCluster{}, &EtcdClusterList{})
}
