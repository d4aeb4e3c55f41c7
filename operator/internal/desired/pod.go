package desired

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// Member describes one member pod to create.
type Member struct {
	// Name of the pod and of the etcd member.
	Name string
	// Version of etcd to run (no leading v).
	Version string
	// InitialCluster maps member name to peer URL for every member the new
	// one must know at start, itself included.
	InitialCluster map[string]string
	// NewCluster is true only for the members that bootstrap a cluster together.
	NewCluster bool
	// Token is the initial-cluster-token of a new cluster.
	Token string
	// ImageNotPulled is the image the member could not pull before this pod
	// (AnnotationImageNotPulled); "" for most pods.
	ImageNotPulled string
	// ImageUnhealthy is the image the member did not become healthy on
	// before this pod (AnnotationImageUnhealthy); "" for most pods.
	ImageUnhealthy string
}

// InitialClusterFlag renders name=peerURL pairs in a stable order.
func InitialClusterFlag(members map[string]string) string {
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	pairs := make([]string, 0, len(names))
	for _, name := range names {
		pairs = append(pairs, name+"="+members[name])
	}
	return strings.Join(pairs, ",")
}

// BootstrapCluster reads back the --initial-cluster of a member command that
// bootstraps a new cluster; nil for a member that joined an existing one.
func BootstrapCluster(command []string) map[string]string {
	if !slices.Contains(command, "--initial-cluster-state=new") {
		return nil
	}
	for _, arg := range command {
		list, ok := strings.CutPrefix(arg, "--initial-cluster=")
		if !ok {
			continue
		}
		members := map[string]string{}
		for pair := range strings.SplitSeq(list, ",") {
			if name, url, ok := strings.Cut(pair, "="); ok {
				members[name] = url
			}
		}
		return members
	}
	return nil
}

// TokenOf reads back the --initial-cluster-token of a member command.
func TokenOf(command []string) string {
	for _, arg := range command {
		if token, ok := strings.CutPrefix(arg, "--initial-cluster-token="); ok {
			return token
		}
	}
	return ""
}

// EtcdCommand is the member's command line.
func EtcdCommand(c *etcdv1beta2.EtcdCluster, m Member) []string {
	state := "existing"
	if m.NewCluster {
		state = "new"
	}
	cmd := []string{
		EtcdBinary,
		"--name=" + m.Name,
		"--data-dir=" + DataDir,
		fmt.Sprintf("--listen-client-urls=%s://0.0.0.0:%d", ClientScheme(c), ClientPort),
		fmt.Sprintf("--listen-peer-urls=%s://0.0.0.0:%d", PeerScheme(c), PeerPort),
		// Plain HTTP whatever spec.TLS says: the probes' listener (see MetricsPort).
		fmt.Sprintf("--listen-metrics-urls=http://0.0.0.0:%d", MetricsPort),
		"--advertise-client-urls=" + ClientURL(c, m.Name),
		"--initial-advertise-peer-urls=" + PeerURL(c, m.Name),
		"--initial-cluster=" + InitialClusterFlag(m.InitialCluster),
		"--initial-cluster-state=" + state,
	}
	if m.NewCluster && m.Token != "" {
		cmd = append(cmd, "--initial-cluster-token="+m.Token)
	}
	// Not part of the pod policy hash: running members keep the command
	// they were made with, and new members get these (see spaceFlags).
	cmd = append(cmd, spaceFlags(c)...)
	return append(cmd, tlsFlags(c)...)
}

// MemberPod is the pod of one member, named like the member. Its probes are
// HTTP (see memberProbes) unless u.ShellProbe asks for the old exec probe.
func MemberPod(c *etcdv1beta2.EtcdCluster, m Member, u Unsafe) *corev1.Pod {
	policy := c.Spec.Pod
	if policy == nil {
		policy = &etcdv1beta2.PodPolicy{}
	}
	labels := map[string]string{}
	maps.Copy(labels, policy.Labels)
	maps.Copy(labels, Selector(c.Name))
	labels[LabelNode] = m.Name
	annotations := map[string]string{}
	maps.Copy(annotations, policy.Annotations)
	annotations[AnnotationVersion] = m.Version
	annotations[AnnotationPodPolicy] = PodPolicyHash(c)
	if m.ImageNotPulled != "" {
		annotations[AnnotationImageNotPulled] = m.ImageNotPulled
	}
	if m.ImageUnhealthy != "" {
		annotations[AnnotationImageUnhealthy] = m.ImageUnhealthy
	}
	certVolumes, certMounts := tlsVolumes(c)
	startup, liveness, readiness := memberProbes(m.Version)
	if u.ShellProbe {
		readiness = shellReadinessProbe()
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            m.Name,
			Namespace:       c.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{OwnerReference(c)},
		},
		Spec: corev1.PodSpec{
			// hostname + subdomain give the pod its DNS name under the headless Service.
			Hostname:      m.Name,
			Subdomain:     PeerServiceName(c.Name),
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{
				Name:    ContainerName,
				Image:   Image(c, m.Version),
				Command: EtcdCommand(c, m),
				Ports: []corev1.ContainerPort{
					{Name: "client", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
					{Name: "peer", ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
				},
				Env:             policy.EtcdEnv,
				SecurityContext: containerSecurityContext(),
				Resources:       Resources(policy.Resources),
				VolumeMounts:    append([]corev1.VolumeMount{dataMount()}, certMounts...),
				StartupProbe:    startup,
				LivenessProbe:   liveness,
				ReadinessProbe:  readiness,
			}},
			// etcd is PID 1 and handles SIGTERM; the plan stops members by
			// deleting their pods, so etcd must get the time to finish.
			TerminationGracePeriodSeconds: ptr.To(TerminationGracePeriodSeconds),
			Volumes:                       append([]corev1.Volume{dataVolume(c, m.Name)}, certVolumes...),
			NodeSelector:                  policy.NodeSelector,
			Tolerations:                   Tolerations(policy.Tolerations),
			Affinity:                      affinity(c, policy),
			SecurityContext:               podSecurityContext(policy),
		},
	}
	return pod
}

// TerminationGracePeriodSeconds is how long etcd has to stop after SIGTERM
// before it is killed. Its graceful stop drains client gRPC calls for up to
// the request timeout (5 s plus two election timeouts, 7 s by default) and
// then, if it still leads, hands leadership over within the same bound; 60 s
// covers both with room for slow disks and longer election timeouts.
const TerminationGracePeriodSeconds int64 = 60

// NonRootUser runs etcd when spec.pod.securityContext does not say otherwise.
const NonRootUser = 65532

// podSecurityContext is the user's, or one that passes the "restricted" Pod
// Security Standard so members can run in a namespace that enforces it.
func podSecurityContext(policy *etcdv1beta2.PodPolicy) *corev1.PodSecurityContext {
	if policy.SecurityContext != nil {
		return policy.SecurityContext
	}
	id := int64(NonRootUser)
	nonRoot := true
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   &nonRoot,
		RunAsUser:      &id,
		RunAsGroup:     &id,
		FSGroup:        &id,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	no := false
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: &no,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// dataMount holds DataDir.
func dataMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: DataVolume, MountPath: "/var/etcd"}
}

func dataVolume(c *etcdv1beta2.EtcdCluster, member string) corev1.Volume {
	if UsesPVC(c) {
		return corev1.Volume{Name: DataVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(member)},
		}}
	}
	return corev1.Volume{Name: DataVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// affinity is the user's affinity if given; else, with antiAffinity, one
// member per node at most (coreos v0.9.4's meaning); else members are
// spread over nodes where the scheduler can (coreos set nothing here). Two
// members on one node mean a node lost or drained takes two of them at
// once, and after every replacement the scheduler would otherwise place
// the new member wherever it fits, often next to another one. A
// preference never keeps a pod from being scheduled, so a cluster with
// fewer nodes than members still runs.
func affinity(c *etcdv1beta2.EtcdCluster, policy *etcdv1beta2.PodPolicy) *corev1.Affinity {
	if policy.Affinity != nil {
		return policy.Affinity
	}
	oneNodePerMember := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: Selector(c.Name)},
		TopologyKey:   corev1.LabelHostname,
	}
	if policy.AntiAffinity {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{oneNodePerMember},
		}}
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: oneNodePerMember}},
	}}
}

// UsesPVC is true when members keep their data on PersistentVolumeClaims.
func UsesPVC(c *etcdv1beta2.EtcdCluster) bool {
	return c.Spec.Pod != nil && c.Spec.Pod.PersistentVolumeClaimSpec != nil
}

// PVCName is the claim holding a member's data.
func PVCName(member string) string { return member }

// MemberPVC is the claim of one member; nil when the cluster uses emptyDir.
func MemberPVC(c *etcdv1beta2.EtcdCluster, member string) *corev1.PersistentVolumeClaim {
	if !UsesPVC(c) {
		return nil
	}
	meta := objectMeta(c, PVCName(member))
	meta.Labels[LabelNode] = member
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: meta,
		Spec:       *c.Spec.Pod.PersistentVolumeClaimSpec.DeepCopy(),
	}
}
