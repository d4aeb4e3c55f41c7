package backup_test

import (
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// TestCommandParses: the command line the operator gives a backup pod
// (Args.Command) is what the subcommand reads.
func TestCommandParses(t *testing.T) {
	for _, a := range []backup.Args{
		{Endpoints: []string{"http://a:2379", "http://b:2379"}, Timeout: 90 * time.Second, S3Path: "bucket/etcd.backup",
			S3Endpoint: "http://minio:9000", S3ForcePathStyle: true, AWSDir: "/aws", Periodic: true, MaxBackups: 3,
			ResultFile: "/tmp/result", EtcdTLSDir: "/tls"},
		{Endpoints: []string{"http://a:2379"}, Timeout: backup.DefaultTimeout, File: "/var/etcd-backup/etcd.backup",
			AWSDir: backup.DefaultAWSDir, ResultFile: backup.DefaultResultFile},
	} {
		cmd := a.Command("etcd-operator")
		if cmd[0] != "etcd-operator" || cmd[1] != backup.Subcommand {
			t.Fatalf("command %v does not run the backup subcommand", cmd)
		}
		got, err := backup.ParseFlags(cmd[2:])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("%v parsed as %+v, want %+v", cmd, got, a)
		}
	}
}

func TestParseFlagsDefaults(t *testing.T) {
	got, err := backup.ParseFlags([]string{"--endpoints=http://a:2379, http://b:2379,", "--s3-path=b/k"})
	if err != nil {
		t.Fatal(err)
	}
	want := backup.Args{Endpoints: []string{"http://a:2379", "http://b:2379"}, Timeout: 60 * time.Second, S3Path: "b/k",
		AWSDir: "/etc/etcd-backup/aws", ResultFile: "/dev/termination-log"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--s3-path=b/k"}, "--endpoints is required"},
		{[]string{"--endpoints=http://a:2379"}, "exactly one of --s3-path and --file"},
		{[]string{"--endpoints=http://a:2379", "--s3-path=b/k", "--file=/f"}, "exactly one of --s3-path and --file"},
		{[]string{"--endpoints=http://a:2379", "--s3-path=bucket"}, "<bucket>/<object key>"},
		{[]string{"--endpoints=http://a:2379", "--file=/dir/"}, "path of a file"},
		{[]string{"--endpoints=http://a:2379", "--file=/f", "--max-backups=2"}, "periodic backups only"},
		{[]string{"--endpoints=http://a:2379", "--file=/f", "--periodic", "--max-backups=-1"}, "negative"},
		{[]string{"--endpoints=http://a:2379", "--file=/f", "--timeout=0s"}, "--timeout must be positive"},
		{[]string{"--endpoints=http://a:2379", "--file=/f", "extra"}, "unexpected arguments"},
		{[]string{"--endpoint=http://a:2379"}, "flag provided but not defined"},
	} {
		_, err := backup.ParseFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFlags(%q) = %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	if _, err := backup.ParseFlags([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

func TestParseResult(t *testing.T) {
	res := backup.Result{Path: "bucket/etcd.backup_v42_2026-12-04-10:00:00", EtcdRevision: 42, EtcdVersion: "3.5.21", Size: 20512}
	line := res.String()
	if line != `{"path":"bucket/etcd.backup_v42_2026-12-04-10:00:00","etcdRevision":42,"etcdVersion":"3.5.21","size":20512}` {
		t.Fatalf("result line %s", line)
	}
	got, err := backup.ParseResult(line + "\n")
	if err != nil || got != res {
		t.Fatalf("ParseResult = %+v, %v; want %+v", got, err, res)
	}
	if _, err := backup.ParseResult("no etcd member answered: http://a:2379: context deadline exceeded\n"); err == nil ||
		err.Error() != "no etcd member answered: http://a:2379: context deadline exceeded" {
		t.Fatalf("a failure's message reads as %v", err)
	}
	for _, msg := range []string{"", "{", `{"etcdRevision":1}`} {
		if _, err := backup.ParseResult(msg); err == nil {
			t.Errorf("ParseResult(%q) gives no error", msg)
		}
	}
}

func TestPeriodicKey(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 5, 9, 0, time.FixedZone("CET", 3600))
	key := backup.PeriodicKey("etcd.backup", 1234, at)
	if key != "etcd.backup_v1234_2026-12-04-20:05:09" {
		t.Fatalf("PeriodicKey = %q, want coreos' naming in UTC", key)
	}
	rev, got, ok := backup.ParsePeriodicKey("etcd.backup", key)
	if !ok || rev != 1234 || !got.Equal(at) {
		t.Fatalf("ParsePeriodicKey = %d, %v, %v", rev, got, ok)
	}
	for _, other := range []string{"etcd.backup", "etcd.backup_v12", "etcd.backup_vx_2026-12-04-20:05:09",
		"etcd.backup_v12_yesterday", "etcd.backup_v2_v12_2026-12-04-20:05:09", "other_v12_2026-12-04-20:05:09"} {
		if _, _, ok := backup.ParsePeriodicKey("etcd.backup", other); ok {
			t.Errorf("%q read as a periodic backup of etcd.backup", other)
		}
	}
}

// TestBackupCommandParses: the command lines the operator gives a backup
// pod (desired.BackupCommand) are what the subcommand reads.
func TestBackupCommandParses(t *testing.T) {
	for _, tc := range []struct {
		spec etcdv1beta2.BackupSpec
		want backup.Args
	}{
		{etcdv1beta2.BackupSpec{EtcdEndpoints: []string{"http://demo-client:2379"}, StorageType: etcdv1beta2.BackupStorageTypeS3,
			BackupPolicy: &etcdv1beta2.BackupPolicy{TimeoutInSecond: 30, BackupIntervalInSecond: 3600, MaxBackups: 5},
			BackupSource: etcdv1beta2.BackupSource{S3: &etcdv1beta2.S3BackupSource{Path: "bucket/etcd.backup", AWSSecret: "aws",
				Endpoint: "http://minio:9000", ForcePathStyle: true}}},
			backup.Args{Endpoints: []string{"http://demo-client:2379"}, Timeout: 30 * time.Second, S3Path: "bucket/etcd.backup",
				S3Endpoint: "http://minio:9000", S3ForcePathStyle: true, AWSDir: desired.BackupAWSDir, Periodic: true, MaxBackups: 5,
				ResultFile: backup.DefaultResultFile, ScratchDir: desired.BackupScratchDir}},
		{etcdv1beta2.BackupSpec{EtcdEndpoints: []string{"http://a:2379", "http://b:2379"}, StorageType: etcdv1beta2.BackupStorageTypePVC,
			BackupSource: etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "dir/etcd.backup"}}},
			backup.Args{Endpoints: []string{"http://a:2379", "http://b:2379"}, Timeout: backup.DefaultTimeout,
				File: desired.BackupDir + "/dir/etcd.backup", AWSDir: backup.DefaultAWSDir, ResultFile: backup.DefaultResultFile,
				ScratchDir: desired.BackupScratchDir}},
	} {
		cmd := desired.BackupCommand(&etcdv1beta2.EtcdBackup{Spec: tc.spec})
		if cmd[0] != desired.OperatorBinary || cmd[1] != backup.Subcommand {
			t.Fatalf("command %v does not run the backup subcommand", cmd)
		}
		got, err := backup.ParseFlags(cmd[2:])
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%v parsed as %+v, want %+v", cmd, got, tc.want)
		}
	}
}
