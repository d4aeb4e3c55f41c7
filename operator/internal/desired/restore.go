package desired

import (
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// Restoring a cluster from a backup (an EtcdRestore).
const (
	// AnnotationRestore, on a member pod, is the UID of the EtcdRestore whose
	// backup the member was seeded from.
	AnnotationRestore = "etcd.database.coreos.com/restore"
	// AnnotationRestoreAfterLoss, on an EtcdRestore the operator created
	// because every member of its cluster was lost (RestoreAfterLoss), says
	// for people what it restores: the EtcdBackup, the backup's path,
	// revision and time. Messages about the restore repeat it.
	AnnotationRestoreAfterLoss = "etcd.database.coreos.com/restore-after-member-loss"
	// RestoreAWSDir is where the seed container reads the EtcdRestore's
	// awsSecret (coreos' files "credentials" and "config").
	RestoreAWSDir = "/etc/etcd-restore/aws"
	// RestoreBackupDir is where the seed container mounts the claim of a
	// PVC backup, read-only.
	RestoreBackupDir = "/var/etcd-backup"

	restoreAWSVolume    = "restore-aws"
	restoreBackupVolume = "restore-backup"
)

// RestoreMemberName is the name of the member seeded from restore's backup:
// derived from the EtcdRestore's UID, so a second attempt to create it (an
// operator that restarted before it saw the first) fails instead of starting
// a second cluster.
func RestoreMemberName(cluster, restoreUID string) string {
	sum := sha256.Sum256([]byte(restoreUID))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789" // utilrand's, as other member names
	suffix := make([]byte, 10)
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return NewMemberName(cluster, string(suffix))
}

// RestoreSource describes a backup for messages: "S3 bucket/key" or
// "PVC claim/path".
func RestoreSource(spec etcdv1beta2.RestoreSpec) string {
	switch {
	case spec.BackupStorageType == etcdv1beta2.BackupStorageTypeS3 && spec.S3 != nil:
		return "S3 " + spec.S3.Path
	case spec.BackupStorageType == etcdv1beta2.BackupStorageTypePVC && spec.PVC != nil:
		return "PVC " + spec.PVC.ClaimName + "/" + spec.PVC.Path
	}
	return string(spec.BackupStorageType)
}

// RestoreSeedCommand is the seed container's command line for restore's
// backup.
func RestoreSeedCommand(c *etcdv1beta2.EtcdCluster, member string, spec etcdv1beta2.RestoreSpec) []string {
	cfg := seed.Config{
		DataDir: DataDir,
		Name:    member,
		PeerURL: PeerURL(c, member),
		Token:   SeedToken(member),
	}
	switch {
	case spec.S3 != nil && spec.BackupStorageType == etcdv1beta2.BackupStorageTypeS3:
		cfg.FromS3Path, cfg.S3Endpoint, cfg.S3ForcePathStyle = spec.S3.Path, spec.S3.Endpoint, spec.S3.ForcePathStyle
		cfg.AWSDir = RestoreAWSDir
	case spec.PVC != nil:
		cfg.FromFile = RestoreBackupDir + "/" + spec.PVC.Path
	}
	return cfg.Command(OperatorBinary)
}

// RestoreSeedPod is the pod of the one member of a new cluster started on
// restore's backup: as SeedPod, with an init container that fetches the
// backup (the awsSecret or the backup's claim is mounted into it alone, so
// the operator itself never reads the Secret) and restores it into the data
// dir.
func RestoreSeedPod(c *etcdv1beta2.EtcdCluster, m Member, image string, r *etcdv1beta2.EtcdRestore, u Unsafe) *corev1.Pod {
	pod := SeedPod(c, m, Seed{Image: image, From: "backup " + RestoreSource(r.Spec)}, u)
	delete(pod.Annotations, AnnotationSeedRaftIndex)
	delete(pod.Annotations, AnnotationReplaces)
	pod.Annotations[AnnotationRestore] = string(r.UID)
	seed := &pod.Spec.InitContainers[0]
	seed.Command = RestoreSeedCommand(c, m.Name, r.Spec)
	var volume corev1.Volume
	var mount corev1.VolumeMount
	switch {
	case r.Spec.S3 != nil && r.Spec.BackupStorageType == etcdv1beta2.BackupStorageTypeS3:
		volume = corev1.Volume{Name: restoreAWSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: r.Spec.S3.AWSSecret}}}
		mount = corev1.VolumeMount{Name: restoreAWSVolume, MountPath: RestoreAWSDir, ReadOnly: true}
	case r.Spec.PVC != nil:
		volume = corev1.Volume{Name: restoreBackupVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: r.Spec.PVC.ClaimName, ReadOnly: true}}}
		mount = corev1.VolumeMount{Name: restoreBackupVolume, MountPath: RestoreBackupDir, ReadOnly: true}
	}
	if volume.Name != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, volume)
		seed.VolumeMounts = append(seed.VolumeMounts, mount)
	}
	return pod
}

// RestoreOf reads back the EtcdRestore UID RestoreSeedPod recorded.
func RestoreOf(p *corev1.Pod) string { return p.Annotations[AnnotationRestore] }

// RestoreAfterLoss is the EtcdRestore that restores c, every member of which
// was lost, from the backup at source (what describes it). It has c's name
// (coreos' rule) and c as owner, so it goes with the cluster.
func RestoreAfterLoss(c *etcdv1beta2.EtcdCluster, storage etcdv1beta2.BackupStorageType, source etcdv1beta2.RestoreSource, what string) *etcdv1beta2.EtcdRestore {
	return &etcdv1beta2.EtcdRestore{
		ObjectMeta: metav1.ObjectMeta{
			Name:            c.Name,
			Namespace:       c.Namespace,
			Annotations:     map[string]string{AnnotationRestoreAfterLoss: what},
			OwnerReferences: []metav1.OwnerReference{OwnerReference(c)},
		},
		Spec: etcdv1beta2.RestoreSpec{
			BackupStorageType: storage,
			RestoreSource:     *source.DeepCopy(),
			EtcdCluster:       etcdv1beta2.EtcdClusterRef{Name: c.Name},
		},
	}
}
