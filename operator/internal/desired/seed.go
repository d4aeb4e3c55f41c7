package desired

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// Recovery of an emptyDir cluster that lost quorum for good, from the data of
// a member that survived (see plan.LostQuorum).
const (
	// AnnotationRecoverFromSurvivor, "true" on an EtcdCluster, lets the
	// operator start the cluster again from a survivor's data when quorum is
	// lost for good, losing the writes the survivor had not received.
	AnnotationRecoverFromSurvivor = "etcd.database.coreos.com/recover-quorum-from-survivor"
	// AnnotationRestoreFromBackup, on an EtcdCluster on emptyDir, names an
	// EtcdBackup of its namespace: once every member pod is gone (and the
	// data with them), the operator restores the cluster from that
	// EtcdBackup's latest successful backup, losing the writes acknowledged
	// after it (see plan.MembersLost and RestoreAfterLoss).
	AnnotationRestoreFromBackup = "etcd.database.coreos.com/restore-from-backup"
	// AnnotationSeededFrom, on a member pod, names the survivor pod whose data
	// the member was started on; AnnotationSeedRaftIndex is the survivor's
	// raft index then; AnnotationReplaces lists the old cluster's pods, which
	// the operator deletes once the seeded member runs.
	AnnotationSeededFrom    = "etcd.database.coreos.com/seeded-from"
	AnnotationSeedRaftIndex = "etcd.database.coreos.com/seed-raft-index"
	AnnotationReplaces      = "etcd.database.coreos.com/replaces"
	// SeedContainerName is the init container that copies the data.
	SeedContainerName = "seed"
	// OperatorBinary is the operator's command, looked up on the image's PATH.
	OperatorBinary = "etcd-operator"
)

// RecoversFromSurvivor reports whether the cluster opted in.
func RecoversFromSurvivor(c *etcdv1beta2.EtcdCluster) bool {
	return c.Annotations[AnnotationRecoverFromSurvivor] == "true"
}

// RestoresFromBackup is the EtcdBackup the cluster opted in to restoring
// from once every member is lost; "" when it did not.
func RestoresFromBackup(c *etcdv1beta2.EtcdCluster) string {
	return strings.TrimSpace(c.Annotations[AnnotationRestoreFromBackup])
}

// Seed describes where a seeded member's data comes from.
type Seed struct {
	// Image runs the operator's binary (the init container needs no etcd image).
	Image string
	// From is the survivor pod, FromURL its client URL, RaftIndex its raft index.
	From      string
	FromURL   string
	RaftIndex uint64
	// Replaces are the old cluster's pods.
	Replaces []string
}

// SeedToken is the initial-cluster-token of the cluster a seeded member
// starts: its own name, so the new cluster's ID differs from the old one's.
func SeedToken(member string) string { return member }

// SeedCommand is the init container's command line (seed.ParseFlags reads it).
func SeedCommand(c *etcdv1beta2.EtcdCluster, member string, s Seed) []string {
	cmd := []string{
		OperatorBinary, "seed",
		"--from=" + s.FromURL,
		"--data-dir=" + DataDir,
		"--name=" + member,
		"--initial-advertise-peer-urls=" + PeerURL(c, member),
		"--initial-cluster-token=" + SeedToken(member),
	}
	if c.Spec.TLS.IsSecureClient() {
		// The survivor requires a client certificate: the operator's.
		cmd = append(cmd, "--"+seed.FlagEtcdTLSDir+"="+OperatorTLSDir, "--"+seed.FlagEtcdServerName+"="+ServerName(c))
	}
	return cmd
}

// SeedPod is the pod of the one member of a new cluster started on a copy of
// survivor s.From's data: an init container running the operator's binary
// streams a snapshot from the survivor and restores it into the data dir,
// then etcd starts on it as the only member of a new cluster.
func SeedPod(c *etcdv1beta2.EtcdCluster, m Member, s Seed, u Unsafe) *corev1.Pod {
	m.InitialCluster = map[string]string{m.Name: PeerURL(c, m.Name)}
	m.NewCluster, m.Token = true, SeedToken(m.Name)
	pod := MemberPod(c, m, u)
	pod.Annotations[AnnotationSeededFrom] = s.From
	pod.Annotations[AnnotationSeedRaftIndex] = strconv.FormatUint(s.RaftIndex, 10)
	pod.Annotations[AnnotationReplaces] = strings.Join(s.Replaces, ",")
	etcd := pod.Spec.Containers[0]
	pod.Spec.InitContainers = []corev1.Container{{
		Name:            SeedContainerName,
		Image:           s.Image,
		Command:         SeedCommand(c, m.Name, s),
		SecurityContext: containerSecurityContext(),
		Resources:       etcd.Resources,
		// The data dir only: the member's certificates are etcd's alone.
		VolumeMounts: []corev1.VolumeMount{dataMount()},
	}}
	if s.FromURL != "" && c.Spec.TLS.IsSecureClient() {
		// A survivor that requires a client certificate gets the
		// operator's, mounted where coreos mounted it, for this container only.
		pod.Spec.Volumes = append(pod.Spec.Volumes, secretVolume(OperatorTLSVolume, c.Spec.TLS.Static.OperatorSecret))
		pod.Spec.InitContainers[0].VolumeMounts = append(pod.Spec.InitContainers[0].VolumeMounts,
			corev1.VolumeMount{Name: OperatorTLSVolume, MountPath: OperatorTLSDir, ReadOnly: true})
	}
	return pod
}

// SeedOf reads back what SeedPod recorded; ok is false for other pods.
func SeedOf(p *corev1.Pod) (from string, raftIndex uint64, replaces []string, ok bool) {
	from, ok = p.Annotations[AnnotationSeededFrom]
	if !ok {
		return "", 0, nil, false
	}
	raftIndex, _ = strconv.ParseUint(p.Annotations[AnnotationSeedRaftIndex], 10, 64)
	if list := p.Annotations[AnnotationReplaces]; list != "" {
		replaces = strings.Split(list, ",")
	}
	return from, raftIndex, replaces, true
}
