package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// S3RestoreSource says which backup in an S3-compatible store to restore.
type S3RestoreSource struct {
	// Path is "<bucket>/<object key>" of the backup, for example
	// "mybucket/etcd.backup" or an EtcdBackup's status.lastBackupPath.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:XValidation:rule="self.contains('/') && !self.startsWith('/') && !self.endsWith('/')",message="s3.path must be <bucket>/<object key>, for example mybucket/etcd.backup"
	Path string `json:"path"`
	// AWSSecret names a Secret in the restore's namespace with the keys
	// "credentials" and "config" (AWS shared files, profile "default").
	// +kubebuilder:validation:MinLength=1
	AWSSecret string `json:"awsSecret"`
	// Endpoint is the URL of an S3-compatible store; empty means AWS S3.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// ForcePathStyle addresses buckets as <endpoint>/<bucket>.
	// +optional
	ForcePathStyle bool `json:"forcePathStyle"`
}

// RestoreSource is where the backup is read from: the field matching
// backupStorageType.
type RestoreSource struct {
	// S3 is used when backupStorageType is S3.
	// +optional
	S3 *S3RestoreSource `json:"s3,omitempty"`
	// PVC is used when backupStorageType is PVC.
	// +optional
	PVC *PVCSource `json:"pvc,omitempty"`
}

// EtcdClusterRef names an EtcdCluster in the restore's namespace.
type EtcdClusterRef struct {
	// Name is the EtcdCluster's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// RestoreSpec says which cluster to replace by one seeded from which backup.
// +kubebuilder:validation:XValidation:rule="self.backupStorageType != 'S3' || has(self.s3)",message="backupStorageType S3 needs spec.s3 (path and awsSecret)"
// +kubebuilder:validation:XValidation:rule="self.backupStorageType != 'PVC' || has(self.pvc)",message="backupStorageType PVC needs spec.pvc (claimName and path)"
type RestoreSpec struct {
	// BackupStorageType is where the backup is: S3 or PVC.
	BackupStorageType BackupStorageType `json:"backupStorageType"`
	// RestoreSource is the backup's location.
	RestoreSource `json:",inline"`
	// EtcdCluster is the cluster to restore. As with coreos v0.9.4, its
	// members are deleted and a cluster of the same name and spec is created,
	// seeded from the backup on its first member, then grown to spec.size.
	EtcdCluster EtcdClusterRef `json:"etcdCluster"`
}

// RestoreStatus reports the restore (coreos v0.9.4's fields, and ours).
type RestoreStatus struct {
	// Succeeded is true once the restored cluster has spec.size ready members.
	Succeeded bool `json:"succeeded"`
	// Reason says why the restore failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Phase is where the restore is: Pending (the old members are being
	// deleted), Seeding (the new cluster starts on the backup and grows),
	// Restored or Failed.
	// +optional
	Phase RestorePhase `json:"phase,omitempty"`
	// Member is the member started on the backup's data.
	// +optional
	Member string `json:"member,omitempty"`
}

// RestorePhase is where a restore is.
type RestorePhase string

// Restore phases.
const (
	RestorePending  RestorePhase = "Pending"
	RestoreSeeding  RestorePhase = "Seeding"
	RestoreRestored RestorePhase = "Restored"
	RestoreFailed   RestorePhase = "Failed"
)

// EtcdRestore replaces an EtcdCluster by one of the same name and spec whose
// data is a backup's. Its name must equal spec.etcdCluster.name (coreos).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=etcdrestores,singular=etcdrestore
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.etcdCluster.name",message="an EtcdRestore must have the name of the EtcdCluster it restores (spec.etcdCluster.name), as with coreos etcd-operator"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || self.spec == oldSelf.spec",message="an EtcdRestore's spec cannot change: delete it and create another"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.etcdCluster.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Succeeded",type=boolean,JSONPath=`.status.succeeded`
type EtcdRestore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RestoreSpec   `json:"spec"`
	Status RestoreStatus `json:"status,omitempty"`
}

// EtcdRestoreList is a list of EtcdRestore.
// +kubebuilder:object:root=true
type EtcdRestoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdRestore `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EtcdRestore{}, &EtcdRestoreList{})
}
