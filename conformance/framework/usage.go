package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// MemoryUsage is what the sampler saw of the operator's memory.
type MemoryUsage struct {
	// PeakRSSBytes and PeakWorkingSetBytes are the largest samples, summed
	// over the operator's pods and containers.
	PeakRSSBytes        uint64
	PeakWorkingSetBytes uint64
	Samples             int
	// LastError is the most recent failed sample, if any.
	LastError string
}

// MemorySampler polls the operator's memory until stopped.
type MemorySampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	usage  MemoryUsage
}

// StartMemorySampler samples the operator's memory every interval, for at most limit, from the
// kubelet's summary API through the API server's node proxy: it works on any
// cluster, needs no metrics-server, and sees what the kernel charges the
// container (RSS), not what the operator says about itself.
func (e *Env) StartMemorySampler(every, limit time.Duration) *MemorySampler {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	m := &MemorySampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			rss, ws, err := e.OperatorMemory(ctx)
			m.mu.Lock()
			if err != nil {
				m.usage.LastError = err.Error()
			} else {
				m.usage.Samples++
				m.usage.PeakRSSBytes = max(m.usage.PeakRSSBytes, rss)
				m.usage.PeakWorkingSetBytes = max(m.usage.PeakWorkingSetBytes, ws)
			}
			m.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// Stop ends sampling and returns what was seen; safe to call twice.
func (m *MemorySampler) Stop() MemoryUsage {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

// OperatorMemory returns the RSS and working set of the operator
// Deployment's pods, summed.
func (e *Env) OperatorMemory(ctx context.Context) (rss, workingSet uint64, err error) {
	ns := e.Profile.Operator.Namespace
	pods, err := e.OperatorPods(ctx)
	if err != nil {
		return 0, 0, err
	}
	found := false
	byNode := map[string]map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if byNode[p.Spec.NodeName] == nil {
			byNode[p.Spec.NodeName] = map[string]bool{}
		}
		byNode[p.Spec.NodeName][p.Name] = true
	}
	for node, names := range byNode {
		raw, err := e.Kube.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy", "stats", "summary").DoRaw(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("stats of node %s: %w", node, err)
		}
		var s statsv1alpha1.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, 0, fmt.Errorf("stats of node %s: %w", node, err)
		}
		r, ws, ok := podsMemory(s, ns, names)
		rss, workingSet, found = rss+r, workingSet+ws, found || ok
	}
	if !found {
		return 0, 0, fmt.Errorf("no memory statistics for the pods of deployment %s/%s", ns, e.Profile.Operator.Deployment)
	}
	return rss, workingSet, nil
}

// podsMemory sums the RSS and working set of the containers of the named
// pods of namespace in a kubelet's summary; found is false when none of
// them has memory statistics.
func podsMemory(s statsv1alpha1.Summary, namespace string, names map[string]bool) (rss, workingSet uint64, found bool) {
	for _, p := range s.Pods {
		if p.PodRef.Namespace != namespace || !names[p.PodRef.Name] {
			continue
		}
		for _, c := range p.Containers {
			if c.Memory == nil {
				continue
			}
			found = true
			if c.Memory.RSSBytes != nil {
				rss += *c.Memory.RSSBytes
			}
			if c.Memory.WorkingSetBytes != nil {
				workingSet += *c.Memory.WorkingSetBytes
			}
		}
	}
	return rss, workingSet, found
}
