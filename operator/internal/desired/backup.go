package desired

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// Backups run in pods of their own, one per backup, with the operator's
// image: the pod mounts the EtcdBackup's awsSecret or claim, so the operator
// never reads the Secret, and a large snapshot never passes through the
// operator's memory.
const (
	// LabelBackup, on a backup pod, is the name of its EtcdBackup.
	LabelBackup = "etcd.database.coreos.com/backup"
	// BackupContainerName is the backup pod's only container; its
	// termination message is the backup's result (backup.ParseResult).
	BackupContainerName = "backup"
	// BackupAWSDir is where the backup container reads the awsSecret.
	BackupAWSDir = "/etc/etcd-backup/aws"
	// BackupDir is where the backup container mounts a PVC backup's claim.
	BackupDir = "/var/etcd-backup"
	// BackupScratchDir holds the snapshot on disk (an emptyDir) before it is
	// stored, so the revision recorded is the snapshot's own.
	BackupScratchDir = "/var/tmp/etcd-backup"
	// BackupTLSDir is where the backup container reads the clientTLSSecret.
	BackupTLSDir = "/etc/etcd-backup/tls"
	// DefaultBackupTimeout is coreos v0.9.4's default timeoutInSecond.
	DefaultBackupTimeout = 60 * time.Second

	backupAWSVolume = "backup-aws"
	backupVolume    = "backup"
	backupTLSVolume = "backup-tls"
	scratchVolume   = "scratch"
	// backupPodStartAllowance is how long, beyond the backup's timeout, the
	// pod may take to start (image pull, volume attach) before the kubelet
	// stops it.
	backupPodStartAllowance = 2 * time.Minute
)

// BackupTimeout is b's timeout: backupPolicy.timeoutInSecond, or the default.
func BackupTimeout(b *etcdv1beta2.EtcdBackup) time.Duration {
	if p := b.Spec.BackupPolicy; p != nil && p.TimeoutInSecond > 0 {
		return time.Duration(p.TimeoutInSecond) * time.Second
	}
	return DefaultBackupTimeout
}

// BackupInterval is b's interval; 0 for a one-shot backup.
func BackupInterval(b *etcdv1beta2.EtcdBackup) time.Duration {
	if p := b.Spec.BackupPolicy; p != nil && p.BackupIntervalInSecond > 0 {
		return time.Duration(p.BackupIntervalInSecond) * time.Second
	}
	return 0
}

// BackupPodName names the pod of b's backup due at due: a second attempt to
// create it (a pass that did not see the first yet) fails, rather than
// taking the backup twice.
func BackupPodName(b *etcdv1beta2.EtcdBackup, due time.Time) string {
	return b.Name + "-" + strconv.FormatInt(due.Unix(), 36)
}

// BackupCommand is the backup container's command line.
func BackupCommand(b *etcdv1beta2.EtcdBackup) []string {
	args := backup.Args{Endpoints: b.Spec.EtcdEndpoints, Timeout: BackupTimeout(b), ScratchDir: BackupScratchDir}
	switch {
	case b.Spec.StorageType == etcdv1beta2.BackupStorageTypeS3 && b.Spec.S3 != nil:
		args.S3Path, args.S3Endpoint, args.S3ForcePathStyle = b.Spec.S3.Path, b.Spec.S3.Endpoint, b.Spec.S3.ForcePathStyle
		args.AWSDir = BackupAWSDir
	case b.Spec.PVC != nil:
		args.File = BackupDir + "/" + b.Spec.PVC.Path
	}
	if BackupInterval(b) > 0 {
		args.Periodic, args.MaxBackups = true, b.Spec.BackupPolicy.MaxBackups
	}
	if b.Spec.ClientTLSSecret != "" {
		args.EtcdTLSDir = BackupTLSDir
	}
	return args.Command(OperatorBinary)
}

// BackupPod is the pod that takes b's backup due at due, with image (the
// operator's own).
func BackupPod(b *etcdv1beta2.EtcdBackup, image string, due time.Time) *corev1.Pod {
	deadline := int64((BackupTimeout(b) + backupPodStartAllowance) / time.Second)
	no := false
	ctr := corev1.Container{
		Name:                     BackupContainerName,
		Image:                    image,
		Command:                  BackupCommand(b),
		SecurityContext:          containerSecurityContext(),
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      BackupPodName(b, due),
			Namespace: b.Namespace,
			Labels:    map[string]string{LabelBackup: b.Name},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(b, etcdv1beta2.GroupVersion.WithKind("EtcdBackup")),
			},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         &deadline,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			SecurityContext:               podSecurityContext(&etcdv1beta2.PodPolicy{}),
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	switch {
	case b.Spec.StorageType == etcdv1beta2.BackupStorageTypeS3 && b.Spec.S3 != nil:
		pod.Spec.Volumes = []corev1.Volume{{Name: backupAWSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: b.Spec.S3.AWSSecret}}}}
		ctr.VolumeMounts = []corev1.VolumeMount{{Name: backupAWSVolume, MountPath: BackupAWSDir, ReadOnly: true}}
	case b.Spec.PVC != nil:
		pod.Spec.Volumes = []corev1.Volume{{Name: backupVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: b.Spec.PVC.ClaimName}}}}
		ctr.VolumeMounts = []corev1.VolumeMount{{Name: backupVolume, MountPath: BackupDir}}
	}
	if b.Spec.ClientTLSSecret != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: backupTLSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: b.Spec.ClientTLSSecret}}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: backupTLSVolume, MountPath: BackupTLSDir, ReadOnly: true})
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: scratchVolume, MountPath: BackupScratchDir})
	pod.Spec.Containers = []corev1.Container{ctr}
	return pod
}
