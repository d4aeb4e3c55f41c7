package controller_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// fakeNetwork stands in for pod networking: envtest has no kubelet, so the
// test gives each member pod an IP and routes that IP to a real etcd member
// running on loopback under the pod's name.
type fakeNetwork struct {
	mu     sync.Mutex
	routes map[string]string // "http://<pod IP>:2379" → embedded member's client URL
}

func (n *fakeNetwork) dial(endpoints []string) (etcdadmin.Admin, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var routed []string
	for _, ep := range endpoints {
		if r, ok := n.routes[ep]; ok {
			routed = append(routed, r)
		}
	}
	return etcdadmin.Dial(routed)
}

func loopbackURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// startMembers runs one embedded etcd member per pod, named like the pod.
func startMembers(t *testing.T, pods []corev1.Pod) map[string]*embed.Etcd {
	t.Helper()
	peers := map[string]url.URL{}
	var initial []string
	for _, p := range pods {
		u := loopbackURL(t)
		peers[p.Name] = u
		initial = append(initial, p.Name+"="+u.String())
	}
	members := map[string]*embed.Etcd{}
	for _, p := range pods {
		cfg := embed.NewConfig()
		cfg.Name = p.Name
		cfg.Dir = t.TempDir()
		cfg.ListenPeerUrls = []url.URL{peers[p.Name]}
		cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
		cfg.ListenClientUrls = []url.URL{loopbackURL(t)}
		cfg.AdvertiseClientUrls = cfg.ListenClientUrls
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "controller-test"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			t.Fatalf("starting member %s: %v", p.Name, err)
		}
		members[p.Name] = e
		t.Cleanup(func() { stopMember(e) })
	}
	for name, e := range members {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("member %s did not become ready", name)
		}
	}
	return members
}

var stopped sync.Map

// stopMember closes a member once; embed panics on a second Close.
func stopMember(e *embed.Etcd) {
	if _, done := stopped.LoadOrStore(e, true); !done {
		e.Close()
	}
}

// runningCluster creates an EtcdCluster, lets the operator create its pods,
// runs a real etcd member for each pod and waits until the operator reports
// the cluster Running.
func runningCluster(t *testing.T, name string, size int) (*etcdv1beta2.EtcdCluster, []corev1.Pod, map[string]*embed.Etcd) {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	network := &fakeNetwork{routes: map[string]string{}}
	startOperator(t, ns, network.dial)

	c := newCluster(ns, name, size, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	waitFor(t, "member pods", func() (err error) {
		pods, err = memberPods(ctx, ns, name)
		if err == nil && len(pods) != size {
			err = fmt.Errorf("%d pods", len(pods))
		}
		return err
	})
	members := startMembers(t, pods)
	for i := range pods {
		p := &pods[i]
		ip := fmt.Sprintf("10.0.0.%d", i+1)
		network.mu.Lock()
		network.routes["http://"+ip+":2379"] = "http://" + members[p.Name].Clients[0].Addr().String()
		network.mu.Unlock()
		p.Status.PodIP = ip
		p.Status.Phase = corev1.PodRunning
		if err := k8s.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "cluster Running with every member ready", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
		if got.Status.Phase != etcdv1beta2.PhaseRunning || len(got.Status.Members.Ready) != size ||
			available == nil || available.Status != metav1.ConditionTrue {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
	return c, pods, members
}

func clientURLs(members map[string]*embed.Etcd, pods ...corev1.Pod) []string {
	var urls []string
	for _, p := range pods {
		urls = append(urls, "http://"+members[p.Name].Clients[0].Addr().String())
	}
	return urls
}

func eventReasons(ctx context.Context, ns string) (map[string]bool, error) {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range events.Items {
		seen[e.Reason] = true
	}
	return seen, nil
}

// TestDeadMemberIsRemovedAndReplaced runs the reconciler against real etcd
// members: the operator must find the truth in etcd's membership, remove a
// member whose pod is gone, and add its replacement as a learner with a new pod.
func TestDeadMemberIsRemovedAndReplaced(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	c, pods, members := runningCluster(t, "replace", 3)
	ns := c.Namespace

	// Kill a member: its etcd stops and its pod disappears.
	victim := pods[2]
	stopMember(members[victim.Name])
	if err := k8s.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	admin, err := etcdadmin.Dial(clientURLs(members, pods[0], pods[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()

	var replacement string
	waitFor(t, "dead member removed and a learner added in its place", func() error {
		ms, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		replacement = ""
		for _, m := range ms {
			name := m.Name
			if name == "" && len(m.PeerURLs) > 0 {
				name = strings.SplitN(strings.TrimPrefix(m.PeerURLs[0], "http://"), ".", 2)[0]
			}
			if name == victim.Name {
				return fmt.Errorf("dead member %s still in membership", victim.Name)
			}
			if m.IsLearner {
				replacement = name
			}
		}
		if replacement == "" || len(ms) != 3 {
			return fmt.Errorf("membership %+v: want 2 voters and 1 learner", ms)
		}
		return nil
	})
	waitFor(t, "the replacement's pod joins the existing cluster", func() error {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: replacement}, &p); err != nil {
			return err
		}
		cmd := strings.Join(p.Spec.Containers[0].Command, " ")
		if !strings.Contains(cmd, "--initial-cluster-state=existing") || strings.Contains(cmd, victim.Name) {
			return fmt.Errorf("replacement command %s", cmd)
		}
		return ownedBy(&p, c)
	})
	waitFor(t, "events tell the story", func() error {
		seen, err := eventReasons(ctx, ns)
		if err != nil {
			return err
		}
		for _, want := range []string{conditions.EventReplacingDeadMember, conditions.EventMemberRemoved, conditions.EventNewMemberAdded} {
			if !seen[want] {
				return fmt.Errorf("no %q event yet (have %v)", want, seen)
			}
		}
		return nil
	})
}

// TestScaleDownRemovesAFollowerFromMembershipThenItsPod checks the order of a
// scale down on real members: membership first, pod second, leader kept.
func TestScaleDownRemovesAFollowerFromMembershipThenItsPod(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	c, pods, members := runningCluster(t, "shrink", 3)

	admin, err := etcdadmin.Dial(clientURLs(members, pods...))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	var leader uint64
	for _, s := range admin.Statuses(ctx) {
		if s.Healthy() {
			leader = s.LeaderID
		}
	}

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":2}}`))
	if err := k8s.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
	var removed string
	waitFor(t, "a follower leaves the membership", func() error {
		ms, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		if len(ms) != 2 {
			return fmt.Errorf("%d members", len(ms))
		}
		names := map[string]bool{}
		for _, m := range ms {
			names[m.Name] = true
		}
		for _, p := range pods {
			if !names[p.Name] {
				removed = p.Name
			}
		}
		for _, m := range ms {
			if m.ID == leader {
				return nil
			}
		}
		return fmt.Errorf("the leader %x was removed", leader)
	})
	waitFor(t, "the removed member's pod is deleted", func() error {
		left, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			return err
		}
		for _, p := range left {
			if p.Name == removed {
				return fmt.Errorf("pod %s still exists", removed)
			}
		}
		if len(left) != 2 {
			return fmt.Errorf("%d pods", len(left))
		}
		return nil
	})
	waitFor(t, "status shows 2 ready members and a Member Removed event", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		scaling := meta.FindStatusCondition(got.Status.Conditions, conditions.Scaling)
		if got.Status.Size != 2 || len(got.Status.Members.Ready) != 2 || scaling == nil || scaling.Status != metav1.ConditionFalse {
			return fmt.Errorf("status %+v", got.Status)
		}
		seen, err := eventReasons(ctx, c.Namespace)
		if err != nil {
			return err
		}
		if !seen[conditions.EventMemberRemoved] {
			return fmt.Errorf("no %q event (have %v)", conditions.EventMemberRemoved, seen)
		}
		return nil
	})
}
