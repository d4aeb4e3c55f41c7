package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// membershipCalls counts the membership changes the operator makes on the
// real members.
type membershipCalls struct {
	adds, removes atomic.Int32
}

func (m *membershipCalls) dial(endpoints []string, tlsConfig *tls.Config) (etcdadmin.Admin, error) {
	a, err := etcdadmin.Dial(endpoints, tlsConfig)
	if err != nil {
		return nil, err
	}
	return countingAdmin{a, m}, nil
}

type countingAdmin struct {
	etcdadmin.Admin
	calls *membershipCalls
}

func (a countingAdmin) AddLearner(ctx context.Context, peerURL string) (etcdadmin.Member, []etcdadmin.Member, error) {
	m, ms, err := a.Admin.AddLearner(ctx, peerURL)
	if err == nil {
		a.calls.adds.Add(1)
	}
	return m, ms, err
}

func (a countingAdmin) Remove(ctx context.Context, id uint64) error {
	err := a.Admin.Remove(ctx, id)
	if err == nil {
		a.calls.removes.Add(1)
	}
	return err
}

// limitPods gives namespace ns a ResourceQuota of n pods, all in use.
// envtest runs no quota controller, so the test writes the quota's status
// as the controller would: the API server's admission charges and refuses
// against it. It waits until a pod is refused.
func limitPods(t *testing.T, ns string, n int64) *corev1.ResourceQuota {
	t.Helper()
	ctx := context.Background()
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(n, resource.DecimalSI)}},
	}
	if err := k8s.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	setQuota(t, quota, n, n)
	waitFor(t, "the quota refuses one more pod", func() error {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quota-probe"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
		}
		err := k8s.Create(ctx, probe, client.DryRunAll)
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("dry-run create: %v", err)
		}
		return nil
	})
	return quota
}

// setQuota writes the quota's hard limit and usage, in pods.
func setQuota(t *testing.T, quota *corev1.ResourceQuota, hard, used int64) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
		t.Fatal(err)
	}
	quota.Spec.Hard = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(hard, resource.DecimalSI)}
	if err := k8s.Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(hard, resource.DecimalSI)},
		Used: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(used, resource.DecimalSI)},
	}
	if err := k8s.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedMemberPodAddsNoLearner: the namespace's ResourceQuota allows
// no more pods, and the cluster is scaled up. The new member's pod is
// checked with a server-side dry run before the learner is added: no
// learner is added (none is added and removed over and over), Stalled says
// the API server's words, a Warning Event too, and the try is repeated
// with a growing delay. Once the quota allows the pod, the member is added.
func TestRefusedMemberPodAddsNoLearner(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	calls := &membershipCalls{}
	c := runningOnEtcdKubeletWith(t, &controller.Reconciler{Dial: calls.dial}, 3, false)
	log := watchConditions(t, c)
	quota := limitPods(t, c.Namespace, 3)
	calls.adds.Store(0)
	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 4 })

	waitFor(t, "Stalled says the quota refuses the pod, or learners churn", func() error {
		if calls.adds.Load() >= 3 {
			return nil
		}
		if _, ok := log.find(conditions.Stalled, conditions.ReasonMemberPodRefused); !ok {
			return fmt.Errorf("no Stalled condition with reason %s; %d learners added, %d members removed",
				conditions.ReasonMemberPodRefused, calls.adds.Load(), calls.removes.Load())
		}
		return nil
	})
	if n := calls.adds.Load(); n > 0 {
		t.Fatalf("a learner was added %d times (and a member removed %d times) while the API server refuses the member's pod: membership churns",
			n, calls.removes.Load())
	}
	log.wantCondition(t, conditions.Stalled, conditions.ReasonMemberPodRefused, "exceeded quota", "refused 3 time(s) in a row", "next try")
	if eventsRecorded(t) {
		waitFor(t, "a Warning Event with the API server's words", func() error {
			notes, err := eventNotes(context.Background(), c.Namespace, conditions.ReasonMemberPodRefused)
			if err != nil {
				return err
			}
			if len(notes) == 0 || !strings.Contains(notes[0], "exceeded quota") {
				return fmt.Errorf("notes %q", notes)
			}
			return nil
		})
	}
	if n := calls.adds.Load(); n > 0 {
		t.Fatalf("a learner was added %d times while the API server refuses the member's pod", n)
	}

	setQuota(t, quota, 4, 3)
	waitConverged(t, c, 4, false)
	if n := calls.adds.Load(); n != 1 {
		t.Fatalf("%d learners added for one new member, want 1", n)
	}
}

// laggingCache shows each pod to the operator's lists only lag after it
// first appeared in one: an informer whose watch delivers late. Pods listed
// before the lag was set are shown throughout.
type laggingCache struct {
	client.Client

	mu        sync.Mutex
	lag       time.Duration
	firstSeen map[types.UID]time.Time
}

func (c *laggingCache) setLag(lag time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lag = lag
}

func (c *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	pods, ok := list.(*corev1.PodList)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	shown := pods.Items[:0]
	for _, p := range pods.Items {
		seen, ok := c.firstSeen[p.UID]
		if !ok && c.lag > 0 {
			c.firstSeen[p.UID], seen = now, now
		} else if !ok {
			c.firstSeen[p.UID] = time.Time{} // listed before the lag: a cache never hides a pod it showed
		}
		if now.Sub(seen) >= c.lag {
			shown = append(shown, p)
		}
	}
	pods.Items = shown
	return nil
}

// TestMemberPodSeenLateIsNotDead: the operator's cache shows a new
// member's pod a second after it was created. The learner is not taken for
// a member whose pod is gone in the meantime: it is added once and
// promoted, never removed.
func TestMemberPodSeenLateIsNotDead(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	ns := newNamespace(t)
	runEtcdKubelet(t, ns)
	calls := &membershipCalls{}
	lagging := &laggingCache{firstSeen: map[types.UID]time.Time{}}
	startManager := runReconciler(t, cfg, ns, &controller.Reconciler{Dial: calls.dial},
		func(c client.Client) client.Client { lagging.Client = c; return lagging })
	t.Cleanup(func() { _ = startManager.stop() })
	c := newCluster(ns, "late", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, 3, false)
	calls.adds.Store(0)
	calls.removes.Store(0)
	lagging.setLag(time.Second)

	patchCluster(t, c, func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = 4 })
	waitForLong(t, "4 started voters, or learners churn", 2*time.Minute, func() error {
		if calls.adds.Load() > 1 {
			return nil
		}
		admin, err := etcdadmin.Dial(memberURLs(ctx, t, c), nil)
		if err != nil {
			return err
		}
		defer func() { _ = admin.Close() }()
		ms, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.IsLearner || m.Name == "" {
				return fmt.Errorf("member %s not a started voter yet", peerName(m))
			}
		}
		if len(ms) != 4 {
			return fmt.Errorf("%d members", len(ms))
		}
		return nil
	})
	if adds, removes := calls.adds.Load(), calls.removes.Load(); adds != 1 || removes != 0 {
		t.Fatalf("%d learners added and %d members removed for one new member whose pod the cache showed a second late: want 1 and 0",
			adds, removes)
	}
	waitConverged(t, c, 4, false)
}

// memberURLs are the client URLs of the cluster's live member pods.
func memberURLs(ctx context.Context, t *testing.T, c *etcdv1beta2.EtcdCluster) []string {
	t.Helper()
	_, endpoints, err := memberEndpoints(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return endpoints
}
