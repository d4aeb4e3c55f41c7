package plan

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func TestRestoreSourceOf(t *testing.T) {
	s3 := etcdv1beta2.BackupSpec{StorageType: etcdv1beta2.BackupStorageTypeS3, BackupSource: etcdv1beta2.BackupSource{
		S3: &etcdv1beta2.S3BackupSource{Path: "bucket/etcd.backup", AWSSecret: "aws", Endpoint: "http://s3:8333", ForcePathStyle: true}}}
	pvc := etcdv1beta2.BackupSpec{StorageType: etcdv1beta2.BackupStorageTypePVC, BackupSource: etcdv1beta2.BackupSource{
		PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "nightly/etcd.backup"}}}
	tests := []struct {
		name    string
		spec    etcdv1beta2.BackupSpec
		path    string
		want    etcdv1beta2.RestoreSource
		wantErr string
	}{
		{"S3: the path as it is, with the backup's secret, endpoint and addressing",
			s3, "bucket/etcd.backup_v42_2026-01-01-12:00:00",
			etcdv1beta2.RestoreSource{S3: &etcdv1beta2.S3RestoreSource{Path: "bucket/etcd.backup_v42_2026-01-01-12:00:00",
				AWSSecret: "aws", Endpoint: "http://s3:8333", ForcePathStyle: true}}, ""},
		{"S3: a key in folders", s3, "bucket/a/b/etcd.backup",
			etcdv1beta2.RestoreSource{S3: &etcdv1beta2.S3RestoreSource{Path: "bucket/a/b/etcd.backup",
				AWSSecret: "aws", Endpoint: "http://s3:8333", ForcePathStyle: true}}, ""},
		{"S3: no key", s3, "bucket", etcdv1beta2.RestoreSource{}, "not <bucket>/<key>"},
		{"PVC: the claim, and the path inside it", pvc, "backups/nightly/etcd.backup_v42_2026-01-01-12:00:00",
			etcdv1beta2.RestoreSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "nightly/etcd.backup_v42_2026-01-01-12:00:00"}}, ""},
		{"PVC: another claim than the backup's", pvc, "other/etcd.backup", etcdv1beta2.RestoreSource{}, "on the claim backups"},
		{"PVC: a path out of the volume", pvc, "backups/../etcd.backup", etcdv1beta2.RestoreSource{}, "not <claim>/<path>"},
		{"PVC: the claim alone", pvc, "backups/", etcdv1beta2.RestoreSource{}, "not <claim>/<path>"},
		{"PVC type without spec.pvc",
			etcdv1beta2.BackupSpec{StorageType: etcdv1beta2.BackupStorageTypePVC}, "backups/etcd.backup", etcdv1beta2.RestoreSource{}, "no spec.pvc"},
		{"a storage type this operator does not restore",
			etcdv1beta2.BackupSpec{StorageType: "ABS"}, "container/etcd.backup", etcdv1beta2.RestoreSource{}, `"ABS" cannot be restored`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RestoreSourceOf(tt.spec, tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("RestoreSourceOf() = %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
}

func TestLatestBackup(t *testing.T) {
	taken := metav1.NewTime(now)
	backup := func(st etcdv1beta2.BackupStatus) *etcdv1beta2.EtcdBackup {
		return &etcdv1beta2.EtcdBackup{
			Spec: etcdv1beta2.BackupSpec{StorageType: etcdv1beta2.BackupStorageTypePVC,
				BackupSource: etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "etcd.backup"}}},
			Status: st,
		}
	}
	stored := etcdv1beta2.BackupStatus{Succeeded: true, EtcdRevision: 42, LastSuccessDate: &taken, LastBackupPath: "backups/etcd.backup_v42"}
	failedSince := stored
	failedSince.Succeeded, failedSince.Reason = false, "backup failed: no member answers"

	tests := []struct {
		name         string
		in           *etcdv1beta2.EtcdBackup
		wantUnusable string
	}{
		{"missing", nil, "does not exist"},
		{"never stored a backup", backup(etcdv1beta2.BackupStatus{Reason: "backup failed: timeout"}), "no successful backup yet (last attempt: backup failed: timeout)"},
		{"stored one", backup(stored), ""},
		// Every attempt fails once the members are gone; the last backup stored is still the one to restore.
		{"stored one, failed since", backup(failedSince), ""},
		{"a path the conversion refuses", backup(etcdv1beta2.BackupStatus{LastSuccessDate: &taken, LastBackupPath: "elsewhere/etcd.backup"}), "on the claim backups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LatestBackup("nightly", tt.in)
			if got.EtcdBackup != "nightly" || !strings.Contains(got.Unusable, tt.wantUnusable) || (tt.wantUnusable == "") != (got.Unusable == "") {
				t.Fatalf("LatestBackup() = %+v, want unusable %q", got, tt.wantUnusable)
			}
			if got.Unusable != "" {
				return
			}
			if got.StorageType != etcdv1beta2.BackupStorageTypePVC || got.Source.PVC == nil || got.Source.PVC.Path != "etcd.backup_v42" ||
				got.Revision != 42 || !got.Taken.Equal(now) {
				t.Fatalf("LatestBackup() = %+v", got)
			}
			for _, want := range []string{"EtcdBackup nightly", "PVC backups/etcd.backup_v42", "revision 42", "2026-01-01T12:00:00Z"} {
				if !strings.Contains(got.Describe(), want) {
					t.Errorf("Describe() = %q does not say %q", got.Describe(), want)
				}
			}
		})
	}
}
