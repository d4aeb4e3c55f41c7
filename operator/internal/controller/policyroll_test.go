package controller_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// TestPodPolicyChangeReachesRunningMembers: a change of spec.pod's
// environment, labels, annotations or security context is rolled out to the
// running members (on claims: each restarted in place, one at a time), as a
// change of resources is; before, only members made later got it.
func TestPodPolicyChangeReachesRunningMembers(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	c, pods, members := runningCluster(t, "policy", 3, plan.Options{}, func(c *etcdv1beta2.EtcdCluster) {
		c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: claimSpec("1Gi")}
	})
	admin, err := etcdadmin.Dial(clientURLs(members, pods...), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	before, err := admin.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}

	patch := []byte(`{"spec":{"pod":{"etcdEnv":[{"name":"ETCD_QUOTA_BACKEND_BYTES","value":"4294967296"}],` +
		`"labels":{"team":"storage"},"annotations":{"example.com/owner":"storage"},"securityContext":{"runAsNonRoot":true,"runAsUser":1000}}}}`)
	if err := k8s.Patch(ctx, c, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	mostDown := 0
	waitFor(t, "every member pod has the new pod policy under its old name", func() error {
		got, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			return err
		}
		up := map[string]corev1.Pod{}
		for _, p := range got {
			if p.DeletionTimestamp == nil {
				up[p.Name] = p
			}
		}
		mostDown = max(mostDown, len(pods)-len(up))
		for _, old := range pods {
			p, ok := up[old.Name]
			switch {
			case !ok:
				return fmt.Errorf("pod %s is not back", old.Name)
			case len(p.Spec.Containers[0].Env) != 1 || p.Spec.Containers[0].Env[0].Name != "ETCD_QUOTA_BACKEND_BYTES":
				return fmt.Errorf("pod %s has environment %v", p.Name, p.Spec.Containers[0].Env)
			case p.Labels["team"] != "storage" || p.Annotations["example.com/owner"] != "storage":
				return fmt.Errorf("pod %s has labels %v, annotations %v", p.Name, p.Labels, p.Annotations)
			case p.Spec.SecurityContext == nil || p.Spec.SecurityContext.RunAsUser == nil || *p.Spec.SecurityContext.RunAsUser != 1000:
				return fmt.Errorf("pod %s has security context %+v", p.Name, p.Spec.SecurityContext)
			}
		}
		return nil
	})
	if mostDown > 1 {
		t.Errorf("%d member pods were down at once; the policy must be rolled one member at a time", mostDown)
	}
	after, err := admin.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("membership changed from %d to %d members; with claims members restart in place", len(before), len(after))
	}
}
