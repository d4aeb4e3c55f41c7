package framework

// The floor of the create, scale and replace timings: the reference
// operator's own member pods and Services, built by its code
// (operator/floor), which the suite creates, grows and replaces itself with
// no operator deciding anything. An operator's figure divided by the floor
// is what its decisions cost.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/etcdproof/etcdproof/conformance/profile"
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/floor"
)

const (
	// floorRetry is how soon a membership change etcd refused for now is
	// tried again.
	floorRetry = 200 * time.Millisecond
	// floorRetryTimeout bounds those retries: for a promotion, the learner's
	// pod started and its log caught up.
	floorRetryTimeout = 2 * time.Minute
)

// FloorCluster is a cluster of the reference's member pods with no
// EtcdCluster behind them: the suite does what an operator would.
type FloorCluster struct {
	// EtcdCluster waits and reads ground truth as for any cluster; its
	// Env's profile names the reference's pods and claims nothing.
	*EtcdCluster
	spec    *etcdv1beta2.EtcdCluster
	members []string
}

// NewFloorCluster prepares a floor cluster name in namespace at etcd
// version, its images from the run's profile. It creates nothing.
func (e *Env) NewFloorCluster(ctx context.Context, namespace, name, version string) (*FloorCluster, error) {
	spec := &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name)},
		Spec:       etcdv1beta2.EtcdClusterSpec{Version: version, Repository: e.Profile.Etcd.Repository},
	}
	p := *e.Profile
	p.Cluster = profile.Cluster{
		Namespace:      p.Cluster.Namespace,
		MemberSelector: labels.Set(floor.Selector(spec)).String(),
		ClientService:  floor.ClientServiceName(spec),
		ClientPort:     floor.ClientPort,
	}
	fe, err := NewEnv(ctx, e.Opts, &p, e.Config)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	return &FloorCluster{EtcdCluster: &EtcdCluster{env: fe, Name: name, Namespace: namespace}, spec: spec}, nil
}

// Create creates the Services, then the pods of size members that
// bootstrap together, as the reference's bootstrap does.
func (f *FloorCluster) Create(ctx context.Context, size int) error {
	for _, s := range floor.Services(f.spec) {
		if _, err := f.env.Kube.CoreV1().Services(f.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("floor: creating Service %s: %w", s.Name, err)
		}
	}
	names := make([]string, 0, size)
	for range size {
		names = append(names, f.newMemberName())
	}
	for _, p := range floor.BootstrapPods(f.spec, f.spec.Spec.Version, f.Name, names) {
		if err := f.createPod(ctx, p); err != nil {
			return err
		}
	}
	f.members = names
	return nil
}

// AddMember adds a member the fastest way etcd allows and starts its pod,
// returning its name: as a learner, promoted as soon as etcd accepts it,
// when the learner has caught up with the leader (the reference's path).
func (f *FloorCluster) AddMember(ctx context.Context) (string, error) {
	name := f.newMemberName()
	var id uint64
	// etcd refuses even a learner ("unhealthy cluster") until every member
	// has been connected for 5 s, as in a scale right after creation.
	err := f.retryRefused(ctx, func(cli *clientv3.Client) error {
		resp, err := cli.MemberAddAsLearner(ctx, []string{floor.PeerURL(f.spec, name)})
		if err == nil {
			id = resp.Member.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("floor: adding member %s as a learner: %w", name, err)
	}
	f.members = append(f.members, name)
	if err := f.createPod(ctx, floor.JoiningPod(f.spec, f.spec.Spec.Version, name, f.members)); err != nil {
		return "", err
	}
	err = f.retryRefused(ctx, func(cli *clientv3.Client) error {
		_, err := cli.MemberPromote(ctx, id)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("floor: promoting member %s: %w", name, err)
	}
	return name, nil
}

// retryRefused calls do through a running member until etcd stops
// refusing it for now: a cluster not yet connected for etcd's health
// interval, a learner not yet caught up with the leader.
func (f *FloorCluster) retryRefused(ctx context.Context, do func(*clientv3.Client) error) error {
	return wait.PollUntilContextTimeout(ctx, floorRetry, floorRetryTimeout, true, func(ctx context.Context) (bool, error) {
		err := f.withEtcd(ctx, "", do)
		if refusedForNow(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// refusedForNow is etcd refusing a membership change until later, which
// every member would answer alike.
func refusedForNow(err error) bool {
	return errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrMemberLearnerNotReady)
}

// RemoveMember removes member name from etcd's membership and deletes its
// pod, whether that pod still runs (a scale down) or is gone (a replacement).
func (f *FloorCluster) RemoveMember(ctx context.Context, name string) error {
	err := f.withEtcd(ctx, name, func(cli *clientv3.Client) error {
		list, err := cli.MemberList(ctx)
		if err != nil {
			return err
		}
		for _, m := range list.Members {
			if len(m.PeerURLs) > 0 && m.PeerURLs[0] == floor.PeerURL(f.spec, name) {
				_, err := cli.MemberRemove(ctx, m.ID)
				return err
			}
		}
		return fmt.Errorf("etcd lists no member with peer URL %s", floor.PeerURL(f.spec, name))
	})
	if err != nil {
		return fmt.Errorf("floor: removing member %s: %w", name, err)
	}
	f.members = slices.DeleteFunc(f.members, func(n string) bool { return n == name })
	if err := f.DeletePod(ctx, name); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("floor: deleting pod %s: %w", name, err)
	}
	return nil
}

// withEtcd calls do with a client of a running member other than skip.
func (f *FloorCluster) withEtcd(ctx context.Context, skip string, do func(*clientv3.Client) error) error {
	pods, err := f.MemberPods(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pods {
		if p.Name == skip || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		cli, closeClient, err := f.memberClient(p.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = do(cli)
		closeClient()
		if err == nil || refusedForNow(err) {
			// A refusal is etcd's answer: asking the other members
			// would only delay the next try.
			return err
		}
		errs = append(errs, fmt.Errorf("through %s: %w", p.Name, err))
	}
	return fmt.Errorf("no running member answered: %w", errors.Join(errs...))
}

func (f *FloorCluster) createPod(ctx context.Context, p *corev1.Pod) error {
	if _, err := f.env.Kube.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("floor: creating pod %s: %w", p.Name, err)
	}
	return nil
}

// newMemberName is named like the reference's members.
func (f *FloorCluster) newMemberName() string { return f.Name + "-" + utilrand.String(10) }
