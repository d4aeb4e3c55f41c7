package controller_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// memberIDs reads etcd's membership of cluster c: member name → ID.
func memberIDs(t *testing.T, c *etcdv1beta2.EtcdCluster) map[string]uint64 {
	t.Helper()
	ctx := context.Background()
	ids := map[string]uint64{}
	waitFor(t, "etcd's membership", func() error {
		_, endpoints, err := memberEndpoints(ctx, c)
		if err != nil {
			return err
		}
		admin, err := etcdadmin.Dial(endpoints, nil)
		if err != nil {
			return err
		}
		defer func() { _ = admin.Close() }()
		ms, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			ids[m.Name] = m.ID
		}
		return nil
	})
	return ids
}

// TestUpgradeToCrashingReleaseIsHeld: spec.version names a release whose
// etcd exits as soon as it starts. The member that tried it goes back to
// the version it ran (on its claim; on emptyDir the learner that tried it
// is removed), the upgrade is held with a condition and an Event saying
// why, no member is replaced, status.currentVersion stays the version that
// runs, and spec.version can be set back to it.
func TestUpgradeToCrashingReleaseIsHeld(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	const good, bad = "3.5.33", "3.5.36"
	for _, tt := range []struct {
		name    string
		size    int
		volumes bool
	}{
		{"one member on a claim", 1, true},
		{"three members on claims", 3, true},
		{"three members on emptyDir", 3, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := newNamespace(t)
			kubelet := runEtcdKubelet(t, ns)
			startReconciler(t, cfg, ns, &controller.Reconciler{NotRunningDeadline: 3 * time.Second})
			c := newCluster(ns, "crash", tt.size, good)
			if tt.volumes {
				withVolumes(c)
			}
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			waitConverged(t, c, tt.size, tt.volumes)
			key := putKey(t, c)
			before := memberIDs(t, c)

			kubelet.crashOn(desired.ImageOf(etcdv1beta2.DefaultRepository, bad))
			patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Version = bad })
			waitForLong(t, "the upgrade held, members on "+good, 2*time.Minute, func() error {
				var got etcdv1beta2.EtcdCluster
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
					return err
				}
				up := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
				if up == nil || up.Status != metav1.ConditionFalse || up.Reason != conditions.ReasonNewVersionUnhealthy || !strings.Contains(up.Message, bad) {
					return fmt.Errorf("Upgrading %+v, status.currentVersion %q", up, got.Status.CurrentVersion)
				}
				if got.Status.CurrentVersion != good {
					return fmt.Errorf("status.currentVersion %q, want %s", got.Status.CurrentVersion, good)
				}
				return nil
			})
			waitConverged(t, c, tt.size, tt.volumes)
			getKey(t, c, key)
			pods, err := memberPods(ctx, ns, c.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				if image := p.Spec.Containers[0].Image; image != desired.ImageOf(etcdv1beta2.DefaultRepository, good) {
					t.Errorf("pod %s runs %s while the upgrade is held, want %s", p.Name, image, good)
				}
			}
			if after := memberIDs(t, c); !maps.Equal(after, before) {
				t.Errorf("membership %v, want the members from before the upgrade %v: none replaced", after, before)
			}
			if eventsRecorded(t) {
				waitFor(t, "a Warning Event says the upgrade is held", func() error {
					var events corev1.EventList
					if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
						return err
					}
					var seen []string
					for _, e := range events.Items {
						if e.Reason == conditions.EventUpgradeHeld && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, bad) {
							return nil
						}
						seen = append(seen, e.Reason)
					}
					return fmt.Errorf("no %q event naming %s; events: %v", conditions.EventUpgradeHeld, bad, slices.Compact(slices.Sorted(slices.Values(seen))))
				})
			}

			// Rolling back to the patch the members run is accepted, and ends the hold.
			patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Version = good })
			waitFor(t, "Upgrading False, UpToDate", func() error {
				var got etcdv1beta2.EtcdCluster
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
					return err
				}
				up := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
				if up == nil || up.Reason != conditions.ReasonUpToDate {
					return fmt.Errorf("Upgrading %+v", up)
				}
				return nil
			})
		})
	}
}
