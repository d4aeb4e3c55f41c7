package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// fakeNetwork stands in for pod networking: envtest has no kubelet, so the
// test gives each member pod an IP and routes that IP to a real etcd member
// running on loopback under the pod's name.
type fakeNetwork struct {
	mu     sync.Mutex
	routes map[string]string    // "http://<pod IP>:2379" → embedded member's client URL
	dialed map[string]time.Time // endpoint → when the operator last asked it
}

func (n *fakeNetwork) dial(endpoints []string, tlsConfig *tls.Config) (etcdadmin.Admin, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dialed == nil {
		n.dialed = map[string]time.Time{}
	}
	var routed []string
	for _, ep := range endpoints {
		n.dialed[ep] = time.Now()
		if r, ok := n.routes[ep]; ok {
			routed = append(routed, r)
		}
	}
	return etcdadmin.Dial(routed, tlsConfig)
}

// dialedSince reports whether the operator asked endpoint ep after t.
func (n *fakeNetwork) dialedSince(ep string, t time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dialed[ep].After(t)
}

// startMembers runs one embedded etcd member per pod, named like the pod.
func startMembers(t *testing.T, pods []corev1.Pod) map[string]*embed.Etcd {
	t.Helper()
	peers := map[string]url.URL{}
	var initial []string
	for _, p := range pods {
		u := loopback.URL(t)
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
		cfg.ListenClientUrls = []url.URL{loopback.URL(t)}
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
func runningCluster(t *testing.T, name string, size int, opts plan.Options, edit ...func(*etcdv1beta2.EtcdCluster)) (*etcdv1beta2.EtcdCluster, []corev1.Pod, map[string]*embed.Etcd) {
	t.Helper()
	return runningClusterWith(t, &controller.Reconciler{Options: opts}, name, size, edit...)
}

// runningClusterWith is runningCluster with reconciler r (its Dial is set here).
func runningClusterWith(t *testing.T, r *controller.Reconciler, name string, size int, edit ...func(*etcdv1beta2.EtcdCluster)) (*etcdv1beta2.EtcdCluster, []corev1.Pod, map[string]*embed.Etcd) {
	t.Helper()
	return runningClusterOn(t, r, &fakeNetwork{routes: map[string]string{}}, name, size, edit...)
}

// runningClusterOn is runningClusterWith on network, which the test may
// route elsewhere later.
func runningClusterOn(t *testing.T, r *controller.Reconciler, network *fakeNetwork, name string, size int, edit ...func(*etcdv1beta2.EtcdCluster)) (*etcdv1beta2.EtcdCluster, []corev1.Pod, map[string]*embed.Etcd) {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	r.Dial = network.dial
	startReconciler(t, cfg, ns, r)

	c := newCluster(ns, name, size, "3.5.36")
	for _, e := range edit {
		e(c)
	}
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
	ips := map[string]string{}
	for i, p := range pods {
		ip := fmt.Sprintf("10.0.0.%d", i+1)
		ips[p.Name] = ip
		network.mu.Lock()
		network.routes["http://"+ip+":2379"] = "http://" + members[p.Name].Clients[0].Addr().String()
		network.mu.Unlock()
	}
	simulateKubelet(t, ns, ips)
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

// simulateKubelet plays the kubelet for member pods (envtest has none): a
// pod that is known by name gets its IP, phase Running and Ready (its
// member is started by the test), also when the operator recreates it under
// the same name. The disruption controller is played too (runBudgetKeeper).
func simulateKubelet(t *testing.T, ns string, ips map[string]string) {
	runBudgetKeeper(t, ns)
	everyPodUntilTestEnds(t, ns, func(ctx context.Context, p *corev1.Pod) {
		ip, known := ips[p.Name]
		if !known || p.Status.PodIP != "" || p.DeletionTimestamp != nil {
			return
		}
		p.Status.PodIP = ip
		p.Status.Phase = corev1.PodRunning
		for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
			setPodCondition(&p.Status, typ, corev1.ConditionTrue)
		}
		_ = k8s.Status().Update(ctx, p)
	})
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
	c, pods, members := runningCluster(t, "replace", 3, plan.Options{})
	ns := c.Namespace

	// Kill a member: its etcd stops and its pod disappears.
	victim := pods[2]
	stopMember(members[victim.Name])
	if err := k8s.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	admin, err := etcdadmin.Dial(clientURLs(members, pods[0], pods[1]), nil)
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
	// The PodDisruptionBudget counts voters' pods only: the learner's pod
	// (never started here, so a learner for good) must not carry the label.
	waitFor(t, "the voters' pods labelled voter, the learner's not", func() error {
		for _, name := range []string{pods[0].Name, pods[1].Name, replacement} {
			var p corev1.Pod
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
				return err
			}
			if got, want := p.Labels[desired.LabelVoter] == desired.VoterLabelValue, name != replacement; got != want {
				return fmt.Errorf("pod %s labels %v: voter label %t, want %t", name, p.Labels, got, want)
			}
		}
		return nil
	})
	if !eventsRecorded(t) {
		return
	}
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

// TestScaleDownOrder checks on real members in which order a member leaves.
// With 3 voters it is stopped first (its pod deleted gracefully, so its
// clients get retryable errors) and removed from membership once the pod is
// gone. With 2 voters stopping one would lose quorum, so membership goes
// first. Either way the leader stays.
func TestScaleDownOrder(t *testing.T) {
	needAPIServer(t)
	for _, tt := range []struct {
		name      string
		from, to  int
		stopFirst bool
	}{
		{"shrink-3-to-2", 3, 2, true},
		{"shrink-2-to-1", 2, 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, pods, members := runningCluster(t, tt.name, tt.from, plan.Options{})
			admin, err := etcdadmin.Dial(clientURLs(members, pods...), nil)
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
			kubelet := holdPodsUntilStopped(t, pods, members, admin)

			patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"size":%d}}`, tt.to)))
			if err := k8s.Patch(ctx, c, patch); err != nil {
				t.Fatal(err)
			}
			var removed string
			waitFor(t, "a follower leaves the membership, the leader stays", func() error {
				ms, err := admin.Members(ctx)
				if err != nil {
					return err
				}
				if len(ms) != tt.to {
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
				if len(left) != tt.to {
					return fmt.Errorf("%d pods", len(left))
				}
				return nil
			})
			wasMember, stopped := kubelet.stopped(removed)
			if !stopped {
				t.Fatalf("pod %s went away without its member being stopped", removed)
			}
			if wasMember != tt.stopFirst {
				t.Fatalf("member %s still in membership when its pod was deleted: %v, want %v (stop first: %v)",
					removed, wasMember, tt.stopFirst, tt.stopFirst)
			}
			waitFor(t, "status shows the new size and a Member Removed event", func() error {
				var got etcdv1beta2.EtcdCluster
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
					return err
				}
				scaling := meta.FindStatusCondition(got.Status.Conditions, conditions.Scaling)
				recovering := meta.FindStatusCondition(got.Status.Conditions, conditions.Recovering)
				if got.Status.Size != tt.to || len(got.Status.Members.Ready) != tt.to ||
					scaling == nil || scaling.Status != metav1.ConditionFalse ||
					recovering == nil || recovering.Status != metav1.ConditionFalse {
					return fmt.Errorf("status %+v", got.Status)
				}
				if !eventsRecorded(t) {
					return nil
				}
				seen, err := eventReasons(ctx, c.Namespace)
				if err != nil {
					return err
				}
				if !seen[conditions.EventMemberRemoved] || seen[conditions.EventReplacingDeadMember] {
					return fmt.Errorf("want %q and no %q event (have %v)", conditions.EventMemberRemoved, conditions.EventReplacingDeadMember, seen)
				}
				return nil
			})
		})
	}
}

// TestUpgradeWithVolumesRestartsMembersInPlaceLeaderLast upgrades a cluster
// whose members keep their data on PVCs: every member is restarted in place
// (same member, same name, new image), and leadership is moved away before
// the leader's turn.
func TestUpgradeWithVolumesRestartsMembersInPlaceLeaderLast(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	c, pods, members := runningCluster(t, "upgrade", 3, plan.Options{}, func(c *etcdv1beta2.EtcdCluster) {
		c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
	})
	admin, err := etcdadmin.Dial(clientURLs(members, pods...), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	before, err := admin.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaderBefore := uint64(0)
	for _, s := range admin.Statuses(ctx) {
		if s.Healthy() {
			leaderBefore = s.LeaderID
		}
	}

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"3.6.5"}}`))
	if err := k8s.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every pod runs 3.6.5 under its old name", func() error {
		got, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, p := range got {
			if p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.6.5" {
				return fmt.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
			}
			names[p.Name] = true
		}
		for _, p := range pods {
			if !names[p.Name] {
				return fmt.Errorf("pod %s was not recreated", p.Name)
			}
		}
		return nil
	})
	after, err := admin.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("membership changed from %d to %d members; with volumes members restart, not get replaced", len(before), len(after))
	}
	for _, s := range admin.Statuses(ctx) {
		if s.Healthy() && s.LeaderID == leaderBefore {
			t.Fatalf("leader %x still leads: leadership was never moved before restarting it", leaderBefore)
		}
	}
	waitFor(t, "Member Upgraded for each member and Leader Moved", func() error {
		if !eventsRecorded(t) {
			return nil
		}
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(c.Namespace)); err != nil {
			return err
		}
		upgraded, moved := 0, 0
		for _, e := range events.Items {
			switch e.Reason {
			case conditions.EventMemberUpgraded:
				upgraded += int(max(e.Count, 1))
			case conditions.EventLeaderMoved:
				moved++
			}
		}
		if upgraded < 3 || moved < 1 {
			return fmt.Errorf("%d Member Upgraded, %d Leader Moved events", upgraded, moved)
		}
		return nil
	})
	waitFor(t, "status reports the new version and no upgrade in progress", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		up := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
		if got.Status.CurrentVersion != "3.6.5" || got.Status.TargetVersion != "" || up == nil || up.Status != metav1.ConditionFalse {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
}

// The known-bad modes exist so the conformance suite can prove it notices
// them; these tests make sure they really misbehave as documented.

func TestUnsafeSkipDeadMemberRemovalLeavesTheDeadMember(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	_, pods, members := runningCluster(t, "unsafe-dead", 3, plan.Options{SkipDeadMemberRemoval: true})
	victim := pods[2]
	stopMember(members[victim.Name])
	if err := k8s.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	admin, err := etcdadmin.Dial(clientURLs(members, pods[0], pods[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	waitFor(t, "the dead member's pod comes back while the member is never removed", func() error {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&victim), &p); err != nil {
			return err
		}
		if p.UID == victim.UID {
			return fmt.Errorf("pod %s not recreated yet", p.Name)
		}
		ms, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Name == victim.Name && len(ms) == 3 {
				return nil
			}
		}
		return fmt.Errorf("membership %+v: want the dead member still in it", ms)
	})
}

func TestUnsafeUpgradeAllAtOnceRestartsEveryMemberInOnePass(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	c, pods, _ := runningCluster(t, "unsafe-upgrade", 3, plan.Options{UpgradeAllAtOnce: true})
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"3.6.5"}}`))
	if err := k8s.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every pod recreated with 3.6.5 under its old name", func() error {
		got, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			return err
		}
		if len(got) != len(pods) {
			return fmt.Errorf("%d pods", len(got))
		}
		for _, p := range got {
			if p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.6.5" {
				return fmt.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
			}
		}
		return nil
	})
	if !eventsRecorded(t) {
		return
	}
	seen, err := eventReasons(ctx, c.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if seen[conditions.EventLeaderMoved] {
		t.Fatal("unsafe mode moved leadership; it is meant to restart everything with no care")
	}
}

func TestUnsafeMemberObjects(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startReconciler(t, cfg, ns, &controller.Reconciler{Unsafe: desired.Unsafe{LeavePVCOnDelete: true, ShellProbe: true}})
	c := newCluster(ns, "unsafe-objects", 3, "3.6.16")
	c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "one claim of the three has no owner, so deleting the cluster leaves it", func() error {
		var claims corev1.PersistentVolumeClaimList
		if err := k8s.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(claims.Items) != 3 {
			return fmt.Errorf("%d claims", len(claims.Items))
		}
		ownerless := 0
		for _, pvc := range claims.Items {
			switch {
			case len(pvc.OwnerReferences) == 0:
				ownerless++
			case ownedBy(&pvc, c) != nil:
				return ownedBy(&pvc, c)
			}
		}
		if ownerless != 1 {
			return fmt.Errorf("%d claims without an owner, want 1", ownerless)
		}
		return nil
	})
	pods, err := memberPods(ctx, ns, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if probe := p.Spec.Containers[0].ReadinessProbe; probe == nil || probe.Exec == nil || probe.Exec.Command[0] != "/bin/sh" {
			t.Errorf("pod %s readiness probe %+v: want the old exec of /bin/sh", p.Name, probe)
		}
	}
}
