package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func claimSpec(size string) *corev1.PersistentVolumeClaimSpec {
	return &corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
	}
}

// TestCRDKeepsTheClaimSpec: once members keep their data on claims, the
// claim spec stays. Removed, a member whose pod is lost would start on an
// empty emptyDir, and losing every pod would fail the cluster as "data
// lost" while the data sits on the claims; changed, new members' claims
// would differ from the running members'; added to a cluster that ran on
// emptyDir, the next restart in place would bring a member back on a new,
// empty claim. Other pod policy changes, and claims added before a cluster
// first ran, are accepted.
func TestCRDKeepsTheClaimSpec(t *testing.T) {
	needAPIServer(t)
	if !celRules(t) {
		t.Skip("CEL transition rules need Kubernetes 1.25+")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	tests := []struct {
		name        string
		before      *corev1.PersistentVolumeClaimSpec
		phase       etcdv1beta2.ClusterPhase
		edit        func(*etcdv1beta2.EtcdCluster)
		wantRefusal string
	}{
		{"claim spec removed", claimSpec("1Gi"), etcdv1beta2.PhaseRunning,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod.PersistentVolumeClaimSpec = nil },
			"spec.pod.persistentVolumeClaimSpec cannot be removed"},
		{"spec.pod removed", claimSpec("1Gi"), etcdv1beta2.PhaseRunning,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod = nil },
			"spec.pod.persistentVolumeClaimSpec cannot be removed"},
		{"claim size changed", claimSpec("1Gi"), etcdv1beta2.PhaseRunning,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod.PersistentVolumeClaimSpec = claimSpec("2Gi") },
			"spec.pod.persistentVolumeClaimSpec cannot be changed"},
		{"other pod policy changed", claimSpec("1Gi"), etcdv1beta2.PhaseRunning,
			func(c *etcdv1beta2.EtcdCluster) {
				c.Spec.Pod.EtcdEnv = []corev1.EnvVar{{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "4294967296"}}
			},
			""},
		{"claims added to a cluster that ran on emptyDir", nil, etcdv1beta2.PhaseRunning,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod.PersistentVolumeClaimSpec = claimSpec("1Gi") },
			"spec.pod.persistentVolumeClaimSpec cannot be added to a cluster that has run"},
		{"claims added to a cluster that failed on emptyDir", nil, etcdv1beta2.PhaseFailed,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod.PersistentVolumeClaimSpec = claimSpec("1Gi") },
			"spec.pod.persistentVolumeClaimSpec cannot be added to a cluster that has run"},
		{"claims added before the first run (ClaimsWithoutClaimSpec asks for it)", nil, etcdv1beta2.PhaseCreating,
			func(c *etcdv1beta2.EtcdCluster) { c.Spec.Pod.PersistentVolumeClaimSpec = claimSpec("1Gi") },
			""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(ns, fmt.Sprintf("claims-%d", i), 3, "3.5.21")
			c.Spec.Paused = true // the objects only
			c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: tt.before}
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = k8s.Delete(ctx, c, client.PropagationPolicy("Background")) }()
			c.Status.Phase = tt.phase
			if err := k8s.Status().Update(ctx, c); err != nil {
				t.Fatalf("reporting phase %s: %v", tt.phase, err)
			}
			tt.edit(c)
			err := k8s.Update(ctx, c)
			switch {
			case tt.wantRefusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantRefusal != "" && err == nil:
				t.Fatalf("accepted, want a refusal saying %q", tt.wantRefusal)
			case tt.wantRefusal != "" && !strings.Contains(err.Error(), tt.wantRefusal):
				t.Fatalf("error %q does not contain %q", err, tt.wantRefusal)
			case err != nil:
				t.Logf("refused as it should be: %v", err)
			}
		})
	}
}
