package plan

import (
	"fmt"
	"strings"
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// Backup is the latest successful backup of the EtcdBackup a cluster
// restores from once every member is lost, as an EtcdRestore names it.
type Backup struct {
	// EtcdBackup is the EtcdBackup's name.
	EtcdBackup string
	// Unusable says why there is nothing to restore from it (it does not
	// exist, or stored no backup yet); "" when there is.
	Unusable string
	// StorageType and Source are the EtcdRestore's fields for the backup.
	StorageType etcdv1beta2.BackupStorageType
	Source      etcdv1beta2.RestoreSource
	// Path is the EtcdBackup's status.lastBackupPath; Revision and Taken
	// are the backup's etcd revision and when it was stored.
	Path     string
	Revision int64
	Taken    time.Time
}

// Describe says which backup this is, for Events and conditions.
func (b Backup) Describe() string {
	return fmt.Sprintf("the latest backup of EtcdBackup %s (%s %s, etcd revision %d, taken %s)",
		b.EtcdBackup, b.StorageType, b.Path, b.Revision, b.Taken.UTC().Format(time.RFC3339))
}

// LatestBackup is what EtcdBackup name (b; nil when it does not exist)
// says of its latest successful backup. Its status keeps that backup's
// path, revision and time when later attempts fail, as they do once
// every member is gone.
func LatestBackup(name string, b *etcdv1beta2.EtcdBackup) Backup {
	out := Backup{EtcdBackup: name}
	if b == nil {
		out.Unusable = "the EtcdBackup does not exist"
		return out
	}
	st := b.Status
	if st.LastSuccessDate == nil || st.LastBackupPath == "" {
		out.Unusable = "the EtcdBackup has no successful backup yet"
		if st.Reason != "" {
			out.Unusable += " (last attempt: " + st.Reason + ")"
		}
		return out
	}
	source, err := RestoreSourceOf(b.Spec, st.LastBackupPath)
	if err != nil {
		out.Unusable = err.Error()
		return out
	}
	out.StorageType, out.Source = b.Spec.StorageType, source
	out.Path, out.Revision, out.Taken = st.LastBackupPath, st.EtcdRevision, st.LastSuccessDate.Time
	return out
}

// RestoreSourceOf turns an EtcdBackup's status.lastBackupPath back into the
// source of an EtcdRestore: S3's "<bucket>/<key>" is the restore's s3.path
// as it is, with the backup's awsSecret, endpoint and forcePathStyle; PVC's
// "<claim>/<path>" (the claim of spec.pvc) is the restore's pvc claimName
// and path inside the volume.
func RestoreSourceOf(spec etcdv1beta2.BackupSpec, lastBackupPath string) (etcdv1beta2.RestoreSource, error) {
	switch spec.StorageType {
	case etcdv1beta2.BackupStorageTypeS3:
		if spec.S3 == nil {
			return etcdv1beta2.RestoreSource{}, fmt.Errorf("the EtcdBackup's storageType is S3 but it has no spec.s3")
		}
		if !strings.Contains(lastBackupPath, "/") || strings.HasPrefix(lastBackupPath, "/") || strings.HasSuffix(lastBackupPath, "/") {
			return etcdv1beta2.RestoreSource{}, fmt.Errorf("status.lastBackupPath %q is not <bucket>/<key>", lastBackupPath)
		}
		return etcdv1beta2.RestoreSource{S3: &etcdv1beta2.S3RestoreSource{
			Path: lastBackupPath, AWSSecret: spec.S3.AWSSecret, Endpoint: spec.S3.Endpoint, ForcePathStyle: spec.S3.ForcePathStyle,
		}}, nil
	case etcdv1beta2.BackupStorageTypePVC:
		if spec.PVC == nil {
			return etcdv1beta2.RestoreSource{}, fmt.Errorf("the EtcdBackup's storageType is PVC but it has no spec.pvc")
		}
		file, ok := strings.CutPrefix(lastBackupPath, spec.PVC.ClaimName+"/")
		// The same rule as the CRD's for pvc.path: the restore mounts the
		// claim and reads the file inside it.
		if !ok || file == "" || strings.HasPrefix(file, "/") || strings.Contains(file, "..") {
			return etcdv1beta2.RestoreSource{}, fmt.Errorf("status.lastBackupPath %q is not <claim>/<path> on the claim %s", lastBackupPath, spec.PVC.ClaimName)
		}
		return etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: spec.PVC.ClaimName, Path: file}}, nil
	}
	return etcdv1beta2.RestoreSource{}, fmt.Errorf("backups of storageType %q cannot be restored", spec.StorageType)
}
