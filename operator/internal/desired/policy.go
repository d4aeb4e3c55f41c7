package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// DefaultRequests are the etcd container's requests for each resource that
// spec.pod.resources names neither a request nor a limit for: enough for the
// scheduler to keep members off nodes with no room, and no limits (the pod is
// Burstable), so a busy member is neither throttled nor killed for its memory.
func DefaultRequests() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("128Mi"),
	}
}

// Resources is spec.pod.resources with DefaultRequests filled in. A resource
// the user gave a limit but no request keeps it that way: Kubernetes then
// requests the limit, so a pod the user made Guaranteed stays Guaranteed.
func Resources(user corev1.ResourceRequirements) corev1.ResourceRequirements {
	r := *user.DeepCopy()
	for name, q := range DefaultRequests() {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if _, ok := r.Limits[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = q
	}
	return r
}

// podPolicy is the part of spec.pod whose change is rolled out to running
// members: everything the member pod is made from but the claim spec (which
// cannot change, see the CRD) and busyboxImage (ignored). Fields are
// omitted when empty, so a field added here changes the hash only of
// clusters that set it: after such an operator upgrade only their members
// are rolled, once, one at a time.
type podPolicy struct {
	Resources       corev1.ResourceRequirements `json:"resources"`
	NodeSelector    map[string]string           `json:"nodeSelector,omitempty"`
	AntiAffinity    bool                        `json:"antiAffinity,omitempty"`
	Affinity        *corev1.Affinity            `json:"affinity,omitempty"`
	Tolerations     []corev1.Toleration         `json:"tolerations,omitempty"`
	Labels          map[string]string           `json:"labels,omitempty"`
	Annotations     map[string]string           `json:"annotations,omitempty"`
	EtcdEnv         []corev1.EnvVar             `json:"etcdEnv,omitempty"`
	SecurityContext *corev1.PodSecurityContext  `json:"securityContext,omitempty"`
}

// PodPolicyHash identifies the user's pod policy (see podPolicy) as written
// in the spec, not as defaulted here, so a change of the operator's defaults
// rolls no member.
func PodPolicyHash(c *etcdv1beta2.EtcdCluster) string {
	var p podPolicy
	if pp := c.Spec.Pod; pp != nil {
		p = podPolicy{Resources: pp.Resources, NodeSelector: pp.NodeSelector, AntiAffinity: pp.AntiAffinity,
			Affinity: pp.Affinity, Tolerations: pp.Tolerations, Labels: pp.Labels, Annotations: pp.Annotations,
			EtcdEnv: pp.EtcdEnv, SecurityContext: pp.SecurityContext}
	}
	raw, err := json.Marshal(p) // map keys sorted: the same policy gives the same bytes
	if err != nil {
		return "" // cannot happen for these types; "" never rolls a member
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
