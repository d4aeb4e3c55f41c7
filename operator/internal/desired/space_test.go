package desired

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// TestSpaceDefaults: a member gets the operator's quota and auto-compaction
// unless spec.pod.etcdEnv sets them, in which case the flag is left out: an
// etcd flag shadows its environment variable, so the user's value would be
// ignored. The two compaction settings go together (a revision-mode
// retention is a count, a periodic one a duration).
func TestSpaceDefaults(t *testing.T) {
	defaults := []string{"--quota-backend-bytes=2147483648", "--auto-compaction-mode=periodic", "--auto-compaction-retention=5m"}
	tests := []struct {
		name  string
		env   []corev1.EnvVar
		want  []string // flags the command must have
		avoid []string // flag prefixes it must not have
	}{
		{"no environment: every default", nil, defaults, nil},
		{"the quota from the environment", []corev1.EnvVar{{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "8589934592"}},
			defaults[1:], []string{"--quota-backend-bytes"}},
		{"a quota from a ConfigMap counts as set", []corev1.EnvVar{{Name: "ETCD_QUOTA_BACKEND_BYTES",
			ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "quota"}}}},
			defaults[1:], []string{"--quota-backend-bytes"}},
		{"revision mode alone: no retention flag either", []corev1.EnvVar{{Name: "ETCD_AUTO_COMPACTION_MODE", Value: "revision"}},
			defaults[:1], []string{"--auto-compaction-"}},
		{"retention alone: no mode flag either", []corev1.EnvVar{{Name: "ETCD_AUTO_COMPACTION_RETENTION", Value: "1"}},
			defaults[:1], []string{"--auto-compaction-"}},
		{"other variables change nothing", []corev1.EnvVar{{Name: "ETCD_SNAPSHOT_COUNT", Value: "5000"}}, defaults, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sample()
			c.Spec.Pod = &etcdv1beta2.PodPolicy{EtcdEnv: tt.env}
			cmd := MemberPod(c, Member{Name: "example-a", Version: "3.5.21"}, Unsafe{}).Spec.Containers[0].Command
			for _, flag := range tt.want {
				if !slices.Contains(cmd, flag) {
					t.Errorf("command lacks %s: %v", flag, cmd)
				}
			}
			for _, prefix := range tt.avoid {
				for _, arg := range cmd {
					if strings.HasPrefix(arg, prefix) {
						t.Errorf("command has %s although etcdEnv sets it: %v", arg, cmd)
					}
				}
			}
		})
	}
}

// TestQuotaOf reads back the quota a member pod runs with: its flag, else
// its environment, else etcd's own default; unknown (0) when the
// environment takes it from elsewhere.
func TestQuotaOf(t *testing.T) {
	withEnv := func(env ...corev1.EnvVar) *corev1.Pod {
		c := sample()
		c.Spec.Pod = &etcdv1beta2.PodPolicy{EtcdEnv: env}
		return MemberPod(c, Member{Name: "example-a", Version: "3.5.21"}, Unsafe{})
	}
	older := withEnv()
	older.Spec.Containers[0].Command = slices.DeleteFunc(slices.Clone(older.Spec.Containers[0].Command),
		func(arg string) bool { return strings.HasPrefix(arg, "--quota-backend-bytes=") })
	tests := []struct {
		name string
		pod  *corev1.Pod
		want int64
	}{
		{"the default flag", withEnv(), DefaultQuotaBackendBytes},
		{"the environment", withEnv(corev1.EnvVar{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "8388608"}), 8 << 20},
		{"a pod an older operator made (no flag): etcd's default", older, EtcdDefaultQuotaBackendBytes},
		{"zero means etcd's default", withEnv(corev1.EnvVar{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "0"}), EtcdDefaultQuotaBackendBytes},
		{"from a ConfigMap: unknown", withEnv(corev1.EnvVar{Name: "ETCD_QUOTA_BACKEND_BYTES",
			ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "quota"}}}), 0},
	}
	for _, tt := range tests {
		if got := QuotaOf(tt.pod); got != tt.want {
			t.Errorf("%s: quota %d, want %d", tt.name, got, tt.want)
		}
	}
}
