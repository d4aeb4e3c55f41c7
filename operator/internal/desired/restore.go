package desired

import (
	"crypto/sha256"
	"time"

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
	return restoreSeedConfig(c, member, spec).Command(OperatorBinary)
}

// restoreSeedConfig is what the seed of restore's backup does, as the seed
// container and the backup check run it.
func restoreSeedConfig(c *etcdv1beta2.EtcdCluster, member string, spec etcdv1beta2.RestoreSpec) seed.Config {
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
	return cfg
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

// The pod that checks an EtcdRestore's backup before any member is touched.
const (
	// LabelRestoreVerify, on a verify pod, is the name of its EtcdRestore.
	// The pod carries none of the member labels: it is no member, and no
	// Service selects it.
	LabelRestoreVerify = "etcd.database.coreos.com/restore-verify"
	// RestoreVerifyContainerName is the verify pod's one container.
	RestoreVerifyContainerName = "verify-backup"
	// restoreVerifyDir is its scratch space (an emptyDir): the backup is
	// fetched and restored there, then thrown away.
	restoreVerifyDir    = "/var/etcd-verify"
	restoreVerifyVolume = "verify-scratch"
)

// RestoreVerifyPodName is the verify pod of restore: one per EtcdRestore
// (its UID), so an operator that restarts never starts a second.
func RestoreVerifyPodName(restore string, restoreUID string) string {
	sum := sha256.Sum256([]byte("verify/" + restoreUID))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	const maxPrefix = 63 - len("-verify-") - 5
	if len(restore) > maxPrefix {
		restore = restore[:maxPrefix]
	}
	return restore + "-verify-" + string(suffix)
}

// RestoreVerifyPod fetches r's backup and restores it into a scratch
// directory, beside the running cluster, with the same code and mounts as
// the seed container of RestoreSeedPod (`seed --verify-only`): the
// cluster's members are deleted only once it succeeded, so a backup that
// cannot be read or restored (a wrong path or Secret, a corrupt object)
// fails the restore and leaves the cluster as it was. It runs on the
// cluster's pod placement; its result is its exit code, its error the
// termination message (the end of its log).
func RestoreVerifyPod(c *etcdv1beta2.EtcdCluster, image string, r *etcdv1beta2.EtcdRestore) *corev1.Pod {
	member := RestoreMemberName(c.Name, string(r.UID))
	seedPod := RestoreSeedPod(c, Member{Name: member, Version: c.Spec.Version}, image, r, Unsafe{})
	ctr := seedPod.Spec.InitContainers[0]
	ctr.Name = RestoreVerifyContainerName
	cfg := restoreSeedConfig(c, member, r.Spec)
	cfg.DataDir, cfg.VerifyOnly = restoreVerifyDir+"/data", true
	ctr.Command = cfg.Command(OperatorBinary)
	// `seed` writes its error to the termination message file; its log's
	// end stands in where it could not.
	ctr.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	mounts := []corev1.VolumeMount{{Name: restoreVerifyVolume, MountPath: restoreVerifyDir}}
	volumes := []corev1.Volume{{Name: restoreVerifyVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	for _, m := range ctr.VolumeMounts {
		for _, v := range seedPod.Spec.Volumes {
			if v.Name == m.Name && v.Name != DataVolume {
				mounts, volumes = append(mounts, m), append(volumes, v)
			}
		}
	}
	ctr.VolumeMounts = mounts
	no := false
	deadline := int64((seed.DefaultTimeout + 5*time.Minute) / time.Second)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      RestoreVerifyPodName(r.Name, string(r.UID)),
			Namespace: c.Namespace,
			Labels:    map[string]string{LabelRestoreVerify: r.Name},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(r, etcdv1beta2.GroupVersion.WithKind("EtcdRestore")),
			},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         &deadline,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			SecurityContext:               seedPod.Spec.SecurityContext,
			NodeSelector:                  seedPod.Spec.NodeSelector,
			Tolerations:                   seedPod.Spec.Tolerations,
			ImagePullSecrets:              seedPod.Spec.ImagePullSecrets,
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{ctr},
			Volumes:                       volumes,
		},
	}
}
