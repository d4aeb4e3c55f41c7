package kubecompat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	coordinationv1beta1client "k8s.io/client-go/kubernetes/typed/coordination/v1beta1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
)

// LeaseLockFor returns the lock leader election holds in namespace under
// name. It is nil where coordination.k8s.io/v1 serves Leases: the manager
// builds client-go's own lock. Where only v1beta1 does (Kubernetes 1.12 and
// 1.13) it is a LeaseV1Beta1Lock: client-go's lock speaks v1 only, and there
// it fails to create its Lease on every retry, for ever, so the operator
// never starts. why is not empty where no version serves Leases (before 1.12):
// leader election cannot run there.
func (a *Access) LeaseLockFor(cfg *rest.Config, namespace, name string) (lock resourcelock.Interface, why string, err error) {
	v1, err := a.ServesResource(coordinationv1.SchemeGroupVersion.String(), "leases")
	if err != nil {
		return nil, "", fmt.Errorf("discovering the Lease API: %w", err)
	}
	if v1 {
		return nil, "", nil
	}
	v1beta1, err := a.ServesResource(coordinationv1beta1.SchemeGroupVersion.String(), "leases")
	if err != nil {
		return nil, "", fmt.Errorf("discovering the Lease API: %w", err)
	}
	if !v1beta1 {
		return nil, "the API server serves no Leases (coordination.k8s.io, Kubernetes 1.12 and later)", nil
	}
	lock, err = NewLeaseV1Beta1Lock(cfg, namespace, name)
	return lock, "", err
}

// leaderElectionTimeout bounds each request of the lock, as controller-runtime
// bounds its own (half its default renew deadline of 10 s): one hung request
// must not cost the leader its lease.
const leaderElectionTimeout = 5 * time.Second

// LeaseV1Beta1Lock is client-go's Lease lock (resourcelock.LeaseLock) on
// coordination.k8s.io/v1beta1, whose Lease has the same spec as v1's. Like
// the lock controller-runtime builds, its identity is the host name and a
// UUID, and it records LeaderElection Events through core/v1 (which the
// leader-election Role grants).
type LeaseV1Beta1Lock struct {
	client   coordinationv1beta1client.LeasesGetter
	recorder record.EventRecorder
	meta     metav1.ObjectMeta
	identity string
	lease    *coordinationv1beta1.Lease
}

// NewLeaseV1Beta1Lock builds the lock on the Lease namespace/name.
func NewLeaseV1Beta1Lock(cfg *rest.Config, namespace, name string) (*LeaseV1Beta1Lock, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = leaderElectionTimeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	identity := host + "_" + string(uuid.NewUUID())
	// Lives as long as the process, as the manager's own recorder does.
	events := record.NewBroadcaster()
	events.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return &LeaseV1Beta1Lock{
		client:   client.CoordinationV1beta1(),
		recorder: events.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: identity}),
		meta:     metav1.ObjectMeta{Namespace: namespace, Name: name},
		identity: identity,
	}, nil
}

// Get implements resourcelock.Interface.
func (l *LeaseV1Beta1Lock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	lease, err := l.client.Leases(l.meta.Namespace).Get(ctx, l.meta.Name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	l.lease = lease
	spec := coordinationv1.LeaseSpec(lease.Spec)
	record := resourcelock.LeaseSpecToLeaderElectionRecord(&spec)
	raw, err := json.Marshal(*record)
	if err != nil {
		return nil, nil, err
	}
	return record, raw, nil
}

// Create implements resourcelock.Interface.
func (l *LeaseV1Beta1Lock) Create(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	lease := &coordinationv1beta1.Lease{
		ObjectMeta: *l.meta.DeepCopy(),
		Spec:       coordinationv1beta1.LeaseSpec(resourcelock.LeaderElectionRecordToLeaseSpec(&record)),
	}
	created, err := l.client.Leases(l.meta.Namespace).Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	l.lease = created
	return nil
}

// Update implements resourcelock.Interface.
func (l *LeaseV1Beta1Lock) Update(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	if l.lease == nil {
		return errors.New("lease not read yet: call Get or Create first")
	}
	lease := l.lease.DeepCopy()
	lease.Spec = coordinationv1beta1.LeaseSpec(resourcelock.LeaderElectionRecordToLeaseSpec(&record))
	updated, err := l.client.Leases(l.meta.Namespace).Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	l.lease = updated
	return nil
}

// RecordEvent implements resourcelock.Interface: an Event on the Lease, as
// client-go's LeaseLock records it.
func (l *LeaseV1Beta1Lock) RecordEvent(s string) {
	if l.lease == nil {
		return
	}
	subject := &coordinationv1beta1.Lease{ObjectMeta: l.lease.ObjectMeta}
	subject.Kind = "Lease"
	subject.APIVersion = coordinationv1beta1.SchemeGroupVersion.String()
	l.recorder.Eventf(subject, corev1.EventTypeNormal, "LeaderElection", "%s %s", l.identity, s)
}

// Describe implements resourcelock.Interface.
func (l *LeaseV1Beta1Lock) Describe() string {
	return l.meta.Namespace + "/" + l.meta.Name
}

// Identity implements resourcelock.Interface.
func (l *LeaseV1Beta1Lock) Identity() string { return l.identity }
