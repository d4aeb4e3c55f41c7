package controller_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// kubeletFinalizer keeps a deleted member pod around until the test's
// kubelet has stopped its etcd, as a real kubelet does within the grace period.
const kubeletFinalizer = "etcdproof.test/kubelet"

// podStops records, per pod, whether its member was still in etcd's
// membership when the pod was deleted.
type podStops struct {
	mu        sync.Mutex
	wasMember map[string]bool
}

func (s *podStops) stopped(pod string) (wasMember, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wasMember, ok = s.wasMember[pod]
	return wasMember, ok
}

// holdPodsUntilStopped plays the kubelet's part of a graceful pod deletion,
// which envtest lacks: every given pod gets a finalizer; once a pod is
// deleted, the test notes whether its member is still in the membership,
// stops the member's etcd, then lets the pod go.
func holdPodsUntilStopped(t *testing.T, pods []corev1.Pod, members map[string]*embed.Etcd, admin etcdadmin.Admin) *podStops {
	t.Helper()
	ctx := context.Background()
	for i := range pods {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&pods[i]), &p); err != nil {
			t.Fatal(err)
		}
		before := p.DeepCopy()
		p.Finalizers = append(p.Finalizers, kubeletFinalizer)
		if err := k8s.Patch(ctx, &p, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	stops := &podStops{wasMember: map[string]bool{}}
	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(loopCtx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			for i := range pods {
				var p corev1.Pod
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(&pods[i]), &p); err != nil ||
					p.DeletionTimestamp == nil || !slices.Contains(p.Finalizers, kubeletFinalizer) {
					continue
				}
				if _, seen := stops.stopped(p.Name); !seen {
					callCtx, cancelCall := context.WithTimeout(ctx, 5*time.Second)
					ms, err := admin.Members(callCtx)
					cancelCall()
					if err != nil {
						continue
					}
					wasMember := slices.ContainsFunc(ms, func(m etcdadmin.Member) bool { return m.Name == p.Name })
					stopMember(members[p.Name])
					stops.mu.Lock()
					stops.wasMember[p.Name] = wasMember
					stops.mu.Unlock()
				}
				before := p.DeepCopy()
				p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == kubeletFinalizer })
				_ = k8s.Patch(ctx, &p, client.MergeFrom(before))
			}
			return false, nil
		})
	}()
	return stops
}

// untilTestEnds runs look every 50 ms, as the fake controllers of these
// tests (kubelets, the disruption controller) watch the API server, until
// the test ends; the test's cleanup waits for the last look to return.
// Cleanups registered before it run after that.
func untilTestEnds(t *testing.T, look func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			look(ctx)
			return false, nil
		})
	}()
}

// everyPodUntilTestEnds calls sync with each pod of namespace ns, every
// 50 ms, until the test ends (untilTestEnds).
func everyPodUntilTestEnds(t *testing.T, ns string, sync func(ctx context.Context, p *corev1.Pod)) {
	t.Helper()
	untilTestEnds(t, func(ctx context.Context) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return
		}
		for i := range pods.Items {
			sync(ctx, &pods.Items[i])
		}
	})
}
