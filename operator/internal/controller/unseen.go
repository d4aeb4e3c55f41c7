package controller

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// createdPods remembers, per cluster, the member pods this operator created
// and when, until its cache shows them (see plan.Observed.Unseen): the
// cache is fed by a watch, which may deliver a create after the next pass
// has started. In memory only: an operator that starts has a synced cache.
type createdPods struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]time.Time
}

func (p *createdPods) add(c *etcdv1beta2.EtcdCluster, name string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	if p.m == nil {
		p.m = map[types.NamespacedName]map[string]time.Time{}
	}
	if p.m[key] == nil {
		p.m[key] = map[string]time.Time{}
	}
	p.m[key][name] = at
}

// unseen returns the pods of cluster key created less than
// plan.PodCacheGrace before now that listed does not hold, and forgets
// the others.
func (p *createdPods) unseen(key types.NamespacedName, listed map[string]*corev1.Pod, now time.Time) map[string]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]time.Time{}
	for name, at := range p.m[key] {
		if _, seen := listed[name]; seen || now.Sub(at) >= plan.PodCacheGrace {
			delete(p.m[key], name)
			continue
		}
		out[name] = at
	}
	if len(p.m[key]) == 0 {
		delete(p.m, key)
	}
	return out
}

func (p *createdPods) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, key)
}
