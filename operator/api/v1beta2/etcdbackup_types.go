package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupStorageType says where a backup is kept. The values and the storage
// fields are coreos etcd-operator v0.9.4's, so its EtcdBackup and EtcdRestore
// objects apply unchanged; PVC is ours, for clusters without object storage.
// coreos' ABS and GCS are refused by the CRD with the list of supported types,
// rather than accepted and never acted on.
// +kubebuilder:validation:Enum=S3;PVC
type BackupStorageType string

const (
	// BackupStorageTypeS3 keeps backups in an S3-compatible object store.
	BackupStorageTypeS3 BackupStorageType = "S3"
	// BackupStorageTypePVC keeps backups as files on a PersistentVolumeClaim.
	BackupStorageTypePVC BackupStorageType = "PVC"

	// AWSSecretCredentialsFileName and AWSSecretConfigFileName are the keys
	// of an awsSecret: AWS shared credentials and config files, profile
	// "default" (coreos v0.9.4's format).
	AWSSecretCredentialsFileName = "credentials"
	AWSSecretConfigFileName      = "config"
)

// S3BackupSource says where in an S3-compatible store a backup is written.
type S3BackupSource struct {
	// Path is "<bucket>/<object key>", for example "mybucket/etcd.backup".
	// A periodic backup appends "_v<revision>_<time>" to the key, as coreos did.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:XValidation:rule="self.contains('/') && !self.startsWith('/') && !self.endsWith('/')",message="s3.path must be <bucket>/<object key>, for example mybucket/etcd.backup"
	Path string `json:"path"`
	// AWSSecret names a Secret in the backup's namespace with the keys
	// "credentials" and "config" (AWS shared files, profile "default").
	// +kubebuilder:validation:MinLength=1
	AWSSecret string `json:"awsSecret"`
	// Endpoint is the URL of an S3-compatible store; empty means AWS S3.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// ForcePathStyle addresses buckets as <endpoint>/<bucket> rather than
	// <bucket>.<endpoint>; most S3-compatible stores need it.
	// +optional
	ForcePathStyle bool `json:"forcePathStyle"`
}

// PVCSource says where on a PersistentVolumeClaim a backup is written.
type PVCSource struct {
	// ClaimName is a PersistentVolumeClaim in the backup's namespace.
	// +kubebuilder:validation:MinLength=1
	ClaimName string `json:"claimName"`
	// Path is the file's path inside the volume, for example "etcd.backup".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="pvc.path must be a relative path inside the volume, without '..'"
	Path string `json:"path"`
}

// BackupSource is where a backup is written: the field matching storageType.
type BackupSource struct {
	// S3 is used when storageType is S3.
	// +optional
	S3 *S3BackupSource `json:"s3,omitempty"`
	// PVC is used when storageType is PVC.
	// +optional
	PVC *PVCSource `json:"pvc,omitempty"`
}

// BackupPolicy says how often a backup is taken and how many are kept.
type BackupPolicy struct {
	// TimeoutInSecond bounds one backup, from connecting to the members to the
	// stored object (default 60).
	// +kubebuilder:validation:Minimum=0
	// +optional
	TimeoutInSecond int64 `json:"timeoutInSecond,omitempty"`
	// BackupIntervalInSecond > 0 takes a backup that often; 0 takes one.
	// +kubebuilder:validation:Minimum=0
	// +optional
	BackupIntervalInSecond int64 `json:"backupIntervalInSecond,omitempty"`
	// MaxBackups is how many periodic backups are kept; 0 keeps all.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxBackups int `json:"maxBackups,omitempty"`
}

// BackupSpec is what to back up, where to, and how often.
// +kubebuilder:validation:XValidation:rule="self.storageType != 'S3' || has(self.s3)",message="storageType S3 needs spec.s3 (path and awsSecret)"
// +kubebuilder:validation:XValidation:rule="self.storageType != 'PVC' || has(self.pvc)",message="storageType PVC needs spec.pvc (claimName and path)"
type BackupSpec struct {
	// EtcdEndpoints are client URLs of one etcd cluster's members, for
	// example http://example-client:2379. The backup is taken from the member
	// with the highest revision among those that answer.
	// +kubebuilder:validation:MinItems=1
	EtcdEndpoints []string `json:"etcdEndpoints"`
	// StorageType is where the backup goes: S3 or PVC.
	StorageType BackupStorageType `json:"storageType"`
	// BackupPolicy sets the interval, retention and timeout.
	// +optional
	BackupPolicy *BackupPolicy `json:"backupPolicy,omitempty"`
	// BackupSource is the storage location.
	BackupSource `json:",inline"`
	// ClientTLSSecret names a Secret with etcd-client.crt, etcd-client.key and
	// etcd-client-ca.crt for members that require client TLS.
	// +optional
	ClientTLSSecret string `json:"clientTLSSecret,omitempty"`
}

// BackupStatus reports the last backup. The JSON names are coreos v0.9.4's,
// "Reason" capitalised included.
type BackupStatus struct {
	// Succeeded is true when the last backup was stored.
	Succeeded bool `json:"succeeded"`
	// Reason says why the last backup failed.
	// +optional
	Reason string `json:"Reason,omitempty"`
	// EtcdVersion is the version of the member the backup was taken from.
	// +optional
	EtcdVersion string `json:"etcdVersion,omitempty"`
	// EtcdRevision is the revision of the key-value store in the backup.
	// +optional
	EtcdRevision int64 `json:"etcdRevision,omitempty"`
	// LastSuccessDate is when the last backup was stored.
	// +optional
	LastSuccessDate *metav1.Time `json:"lastSuccessDate,omitempty"`
	// LastAttemptDate is when the last backup, stored or not, ended; a
	// periodic backup is next due backupIntervalInSecond after it.
	// +optional
	LastAttemptDate *metav1.Time `json:"lastAttemptDate,omitempty"`
	// LastBackupPath is where the last backup was stored (<bucket>/<key> or
	// <claim>/<path>).
	// +optional
	LastBackupPath string `json:"lastBackupPath,omitempty"`
}

// EtcdBackup takes a snapshot of an etcd cluster, once or periodically.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=etcdbackups,singular=etcdbackup
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.storageType`
// +kubebuilder:printcolumn:name="Succeeded",type=boolean,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.etcdRevision`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastSuccessDate`
type EtcdBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupSpec   `json:"spec"`
	Status BackupStatus `json:"status,omitempty"`
}

// EtcdBackupList is a list of EtcdBackup.
// +kubebuilder:object:root=true
type EtcdBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdBackup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EtcdBackup{}, &EtcdBackupList{})
}
