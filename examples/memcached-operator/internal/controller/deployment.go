package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	cachev1alpha1 "github.com/etcdproof/etcdproof/examples/memcached-operator/api/v1alpha1"
)

// DefaultImage is the memcached image the operator runs unless told
// otherwise (--memcached-image, $RELATED_IMAGE_MEMCACHED): Debian bookworm's
// memcached package, built by scripts/build-memcached-image.sh.
const DefaultImage = "etcdproof/memcached:1.6.18-1"

const (
	// The labels of every Deployment and pod the operator makes.
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelManagedBy = "app.kubernetes.io/managed-by"
	appName        = "memcached"
	managerName    = "memcached-operator"

	memcachedPort = 11211
	// memcachedUser is the image's user (scripts/build-memcached-image.sh),
	// set on the pod too so the kubelet can check it is not root.
	memcachedUser = 11211
)

// podLabels select the pods of m's Deployment: its selector, which cannot
// change once the Deployment exists, so nothing that may change goes in.
func podLabels(m *cachev1alpha1.Memcached) map[string]string {
	return map[string]string{labelName: appName, labelInstance: m.Name, labelManagedBy: managerName}
}

// deploymentFor is the part of m's Deployment the operator owns, for a
// server-side apply: fields left out (the strategy, the kubelet's defaults)
// stay as the API server or another manager set them, and a field the
// operator owns that someone changed (kubectl scale) is set back.
func deploymentFor(m *cachev1alpha1.Memcached, image string) *appsv1ac.DeploymentApplyConfiguration {
	labels := podLabels(m)
	return appsv1ac.Deployment(m.Name, m.Namespace).
		WithLabels(labels).
		// The garbage collector deletes the Deployment with m; blocking
		// the owner's deletion keeps m around in a foreground deletion
		// until its pods are gone.
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(cachev1alpha1.GroupVersion.String()).
			WithKind("Memcached").
			WithName(m.Name).
			WithUID(m.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(m.Spec.Size).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithSpec(memcachedPod(image))))
}

// memcachedPod runs memcached within the restricted Pod Security Standard:
// not root, no privilege escalation, no capabilities, the runtime's
// seccomp profile, and a read-only root (memcached keeps its data in memory).
func memcachedPod(image string) *corev1ac.PodSpecApplyConfiguration {
	return corev1ac.PodSpec().
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(memcachedUser).
			WithRunAsGroup(memcachedUser).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(corev1ac.Container().
			WithName(appName).
			WithImage(image).
			// 64 MiB of items, the modern defaults, and a line per
			// error and warning in the log. Not the tutorial's -m=64:
			// memcached reads "=64" as the short option's value, 0 MiB,
			// and 1.6 exits at start ("Cannot set item size limit higher
			// than 1/2 of memory max").
			WithArgs("--memory-limit=64", "-o", "modern", "-v").
			WithPorts(corev1ac.ContainerPort().WithName(appName).WithContainerPort(memcachedPort).WithProtocol(corev1.ProtocolTCP)).
			// Ready once it accepts connections: what Available counts.
			WithReadinessProbe(corev1ac.Probe().
				WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(appName))).
				WithPeriodSeconds(5)).
			WithResources(corev1ac.ResourceRequirements().
				WithRequests(corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("10m"),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				}).
				// The 64 MiB of items plus memcached's own hash table,
				// buffers and connections.
				WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")})).
			WithSecurityContext(corev1ac.SecurityContext().
				WithAllowPrivilegeEscalation(false).
				WithReadOnlyRootFilesystem(true).
				WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))))
}
