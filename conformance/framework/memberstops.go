package framework

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// MemberStops records the moments member pods of a cluster were stopped,
// from a watch on them: a deletion asked (the pod's deletion timestamp
// less its grace period: when the kubelet was told to stop etcd) or an
// etcd container that exited in place (its last termination's end). A
// release that fails the requests in flight on a member it stops (etcd
// 3.4) has those failures excused at these moments, and at no other.
type MemberStops struct {
	mu     sync.Mutex
	seen   map[string]bool
	at     []time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

// WatchMemberStops starts recording the cluster's member pod stops until
// Stop.
func (c *EtcdCluster) WatchMemberStops(ctx context.Context) (*MemberStops, error) {
	sel, err := profile.Render(c.env.Profile.Cluster.MemberSelector, profile.TemplateData{Name: c.Name, Namespace: c.Namespace})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &MemberStops{seen: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(c.env.Kube, 0, informers.WithNamespace(c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	pods := factory.Core().V1().Pods().Informer()
	record := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			s.record(p, c.EtcdContainer(p))
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			record(obj)
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(s.done)
		factory.Start(ctx.Done())
		<-ctx.Done()
		factory.Shutdown()
	}()
	return s, nil
}

// record notes a stop of pod not seen before.
func (s *MemberStops) record(p *corev1.Pod, container string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.DeletionTimestamp != nil && !s.seen["delete/"+string(p.UID)] {
		s.seen["delete/"+string(p.UID)] = true
		at := p.DeletionTimestamp.Time
		if p.DeletionGracePeriodSeconds != nil {
			at = at.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		}
		s.at = append(s.at, at)
	}
	for _, cs := range p.Status.ContainerStatuses {
		t := cs.LastTerminationState.Terminated
		if cs.Name != container || t == nil {
			continue
		}
		key := "exit/" + string(p.UID) + "/" + t.FinishedAt.UTC().String()
		if !s.seen[key] {
			s.seen[key] = true
			s.at = append(s.at, t.FinishedAt.Time)
		}
	}
}

// Stop ends the watch and returns the stops seen, in the order seen.
func (s *MemberStops) Stop() []time.Time {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}
