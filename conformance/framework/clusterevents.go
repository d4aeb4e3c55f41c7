package framework

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// ClusterEventsInput says what RecordClusterEvents watches.
type ClusterEventsInput struct {
	// Namespace is the check's cluster namespace: the lifecycle of its
	// member pods and its Kubernetes Events are recorded.
	Namespace string
	// MemberPods picks the member pods among the namespace's pods.
	MemberPods labels.Selector
	// OperatorNamespace and OperatorPods pick the operator's pods, whose
	// lifecycle is recorded too (OperatorPods nil: none).
	OperatorNamespace string
	OperatorPods      labels.Selector
	// Record gets each event as it is seen, from the watches' goroutines;
	// never after Stop returned.
	Record func(report.Event)
}

// ClusterEventRecorder watches a check's namespace and the operator's pods
// from RecordClusterEvents until Stop.
type ClusterEventRecorder struct {
	in        ClusterEventsInput
	started   time.Time
	factories []informers.SharedInformerFactory
	stop      chan struct{}

	mu      sync.Mutex
	stopped bool
}

// RecordClusterEvents starts watching and returns once the watches have
// listed what is there, so nothing done after it returns is missed. What
// was there before is no event: pods already there are only the states
// their changes are measured from, and Kubernetes Events are recorded from
// the second it started.
func RecordClusterEvents(ctx context.Context, kube kubernetes.Interface, in ClusterEventsInput) (*ClusterEventRecorder, error) {
	r := &ClusterEventRecorder{in: in, started: time.Now(), stop: make(chan struct{})}
	checkNS := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(in.Namespace))
	if _, err := checkNS.Core().V1().Pods().Informer().AddEventHandler(r.podHandler()); err != nil {
		return nil, err
	}
	if _, err := checkNS.Core().V1().Events().Informer().AddEventHandler(r.eventHandler()); err != nil {
		return nil, err
	}
	r.factories = append(r.factories, checkNS)
	if in.OperatorPods != nil && in.OperatorNamespace != in.Namespace {
		// Only the operator's pods: its namespace may hold others.
		operatorNS := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(in.OperatorNamespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = in.OperatorPods.String() }))
		if _, err := operatorNS.Core().V1().Pods().Informer().AddEventHandler(r.podHandler()); err != nil {
			return nil, err
		}
		r.factories = append(r.factories, operatorNS)
	}
	for _, f := range r.factories {
		f.Start(r.stop)
	}
	for _, f := range r.factories {
		for typ, synced := range f.WaitForCacheSync(ctx.Done()) {
			if !synced {
				r.Stop()
				return nil, fmt.Errorf("watch %v: not listed before %v", typ, context.Cause(ctx))
			}
		}
	}
	return r, nil
}

// Stop ends the watches; nothing is recorded once it returned.
func (r *ClusterEventRecorder) Stop() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	r.mu.Unlock()
	close(r.stop)
	for _, f := range r.factories {
		f.Shutdown()
	}
}

func (r *ClusterEventRecorder) record(ev report.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.in.Record(ev)
	}
}

// podSource says whose pod p is; false for a pod the check does not
// follow (the suite's traffic pods, anything else in the namespace).
func (r *ClusterEventRecorder) podSource(p *corev1.Pod) (report.EventSource, bool) {
	switch {
	case p.Namespace == r.in.Namespace && r.in.MemberPods != nil && r.in.MemberPods.Matches(labels.Set(p.Labels)):
		return report.SourcePod, true
	case p.Namespace == r.in.OperatorNamespace && r.in.OperatorPods != nil && r.in.OperatorPods.Matches(labels.Set(p.Labels)):
		return report.SourceOperator, true
	}
	return "", false
}

func (r *ClusterEventRecorder) podHandler() cache.ResourceEventHandler {
	changed := func(old, cur *corev1.Pod) {
		source, ok := r.podSource(cur)
		if !ok {
			return
		}
		now := time.Now()
		for _, c := range podChanges(old, cur) {
			r.record(report.Event{Time: now, Source: source, Object: objectName("Pod", cur.Name), Reason: c.Reason, Message: c.Message, Level: level(c.Warning)})
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if p, ok := obj.(*corev1.Pod); ok && !isInInitialList {
				changed(nil, p)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			cur, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 {
				changed(old, cur)
			}
		},
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			p, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			if source, ok := r.podSource(p); ok {
				r.record(report.Event{Time: time.Now(), Source: source, Object: objectName("Pod", p.Name), Reason: "Deleted", Level: report.LevelNormal})
			}
		},
	}
}

func (r *ClusterEventRecorder) eventHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			ev, ok := obj.(*corev1.Event)
			if !ok || suitesOwn(ev) {
				return
			}
			seen := time.Now()
			if isInInitialList {
				// Listed, not seen happening: its own time, if it is
				// the check's at all (the API's times are whole
				// seconds).
				seen = eventTime(ev)
				if seen.Before(r.started.Truncate(time.Second)) {
					return
				}
			}
			r.record(kubeEvent(ev, seen))
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Event)
			cur, ok2 := newObj.(*corev1.Event)
			// An update that counts a repeat is the event happening again.
			if ok1 && ok2 && !suitesOwn(cur) && eventCount(cur) > eventCount(old) {
				r.record(kubeEvent(cur, time.Now()))
			}
		},
	}
}

// suitesOwn: the Normal events of the suite's traffic pods (scheduled,
// pulled, started, killed) tell what the suite did, not the cluster.
func suitesOwn(ev *corev1.Event) bool {
	return ev.Type != corev1.EventTypeWarning && ev.InvolvedObject.Kind == "Pod" && strings.HasPrefix(ev.InvolvedObject.Name, trafficPodPrefix)
}

func kubeEvent(ev *corev1.Event, seen time.Time) report.Event {
	msg := ev.Message
	if n := eventCount(ev); n > 1 {
		msg += fmt.Sprintf(" (seen %d times)", n)
	}
	return report.Event{Time: seen, Source: report.SourceEvent, Object: objectName(ev.InvolvedObject.Kind, ev.InvolvedObject.Name),
		Reason: ev.Reason, Message: msg, Level: level(ev.Type == corev1.EventTypeWarning)}
}

// eventCount is how often an event happened: core/v1 counts repeats in
// Count, the events.k8s.io recorder in Series.
func eventCount(ev *corev1.Event) int32 {
	if ev.Series != nil {
		return ev.Series.Count
	}
	return ev.Count
}

// eventTime is when an event last happened, by its own account.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil:
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.FirstTimestamp.Time
}

// objectName names an object as kubectl does: "pod/etcd-0".
func objectName(kind, name string) string { return strings.ToLower(kind) + "/" + name }

func level(warning bool) report.EventLevel {
	if warning {
		return report.LevelWarning
	}
	return report.LevelNormal
}

// RecordClusterEvents records, until Stop, what happens to the cluster
// name in namespace (its member pods by the profile's selector, the
// namespace's Kubernetes Events) and to the operator's pods. An operator
// Deployment that cannot be read leaves the operator's pods out rather
// than the whole recording.
func (e *Env) RecordClusterEvents(ctx context.Context, namespace, name string, record func(report.Event)) (*ClusterEventRecorder, error) {
	sel, err := profile.Render(e.Profile.Cluster.MemberSelector, profile.TemplateData{Name: name, Namespace: namespace})
	if err != nil {
		return nil, err
	}
	members, err := labels.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("cluster.memberSelector %q: %w", sel, err)
	}
	in := ClusterEventsInput{Namespace: namespace, MemberPods: members, OperatorNamespace: e.Profile.Operator.Namespace, Record: record}
	if dep := e.Profile.Operator.Deployment; dep != "" {
		if d, err := e.Kube.AppsV1().Deployments(in.OperatorNamespace).Get(ctx, dep, metav1.GetOptions{}); err == nil {
			in.OperatorPods, _ = metav1.LabelSelectorAsSelector(d.Spec.Selector)
		}
	}
	return RecordClusterEvents(ctx, e.Kube, in)
}
