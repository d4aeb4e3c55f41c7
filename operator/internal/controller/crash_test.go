package controller_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clientv3 "go.etcd.io/etcd/client/v3"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

var errCrashed = errors.New("the operator process is gone (injected crash)")

// crashPoint kills the operator right after the first successful mutating
// call named call, once armed: the manager is stopped and every later
// mutating call of that process fails, so nothing the pass meant to do after
// that call happens, exactly as if the process had died there.
type crashPoint struct {
	call string

	mu    sync.Mutex
	armed bool
	fired bool
	calls []string // mutating calls made while armed, for the failure message
	kill  func()
}

func (c *crashPoint) arm(kill func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.kill = true, kill
}

func (c *crashPoint) hasFired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// do runs one mutating call through the crash point.
func (c *crashPoint) do(call string, fn func() error) error {
	c.mu.Lock()
	dead := c.fired
	c.mu.Unlock()
	if dead {
		return errCrashed
	}
	err := fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed || err != nil {
		return err
	}
	c.calls = append(c.calls, call)
	if call != c.call || c.fired {
		return nil
	}
	c.fired = true
	go c.kill() // the manager waits for this pass to return
	return errCrashed
}

// crashingClient passes the reconciler's Kubernetes writes through a crashPoint.
type crashingClient struct {
	client.Client
	crash *crashPoint
}

func kindOf(obj client.Object) string { return reflect.TypeOf(obj).Elem().Name() }

func (c crashingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if (&client.CreateOptions{}).ApplyOptions(opts).DryRun != nil {
		return c.Client.Create(ctx, obj, opts...) // a dry run changes nothing: no crash point
	}
	return c.crash.do("create "+kindOf(obj), func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c crashingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.crash.do("delete "+kindOf(obj), func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c crashingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.crash.do("update "+kindOf(obj), func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c crashingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.crash.do("patch "+kindOf(obj), func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// SubResource passes evictions (the operator's stops of a healthy voter)
// through the crash point as "evict Pod".
func (c crashingClient) SubResource(name string) client.SubResourceClient {
	return crashingSubResource{c.Client.SubResource(name), name, c.crash}
}

type crashingSubResource struct {
	client.SubResourceClient
	name  string
	crash *crashPoint
}

func (s crashingSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	call := "create " + s.name + " of " + kindOf(obj)
	if s.name == "eviction" {
		call = "evict " + kindOf(obj)
	}
	return s.crash.do(call, func() error { return s.SubResourceClient.Create(ctx, obj, sub, opts...) })
}

func (c crashingClient) Status() client.SubResourceWriter {
	return crashingStatus{c.Client.Status(), c.crash}
}

type crashingStatus struct {
	client.SubResourceWriter
	crash *crashPoint
}

func (s crashingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.crash.do("update status", func() error { return s.SubResourceWriter.Update(ctx, obj, opts...) })
}

func (s crashingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.crash.do("update status", func() error { return s.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

// crashingAdmin passes the reconciler's etcd membership changes through a crashPoint.
type crashingAdmin struct {
	etcdadmin.Admin
	crash *crashPoint
}

func (a crashingAdmin) AddLearner(ctx context.Context, peerURL string) (m etcdadmin.Member, ms []etcdadmin.Member, err error) {
	err = a.crash.do("add learner", func() (err error) { m, ms, err = a.Admin.AddLearner(ctx, peerURL); return err })
	return m, ms, err
}

func (a crashingAdmin) Promote(ctx context.Context, id uint64) error {
	return a.crash.do("promote", func() error { return a.Admin.Promote(ctx, id) })
}

func (a crashingAdmin) Remove(ctx context.Context, id uint64) error {
	return a.crash.do("remove member", func() error { return a.Admin.Remove(ctx, id) })
}

func (a crashingAdmin) MoveLeader(ctx context.Context, to uint64) error {
	return a.crash.do("move leader", func() error { return a.Admin.MoveLeader(ctx, to) })
}

func withVolumes(c *etcdv1beta2.EtcdCluster) {
	c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
}

// TestOperatorCrashAfterEachMutatingCall kills the operator right after each
// kind of change it makes (an etcd membership change, a pod or claim created
// or deleted), in the middle of the operation that makes it, then starts a
// new operator process and requires the cluster to converge: spec.size
// started voting members, one pod and (with volumes) one claim per member and
// nothing else, and the data written before the crash still there.
func TestOperatorCrashAfterEachMutatingCall(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	scaleTo := func(n int) func(*etcdv1beta2.EtcdCluster) {
		return func(c *etcdv1beta2.EtcdCluster) { c.Spec.Size = n }
	}
	upgrade := func(c *etcdv1beta2.EtcdCluster) { c.Spec.Version = "3.5.22" }
	for _, tt := range []struct {
		name    string
		call    string
		volumes bool
		change  func(*etcdv1beta2.EtcdCluster) // nil: crash during the bootstrap
		size    int
	}{
		{name: "bootstrap/create Pod", call: "create Pod", size: 3},
		{name: "scale up/add learner", call: "add learner", change: scaleTo(4), size: 4},
		{name: "scale up/create Pod", call: "create Pod", change: scaleTo(4), size: 4},
		{name: "scale up/promote", call: "promote", change: scaleTo(4), size: 4},
		{name: "scale up with volumes/create PersistentVolumeClaim", call: "create PersistentVolumeClaim", volumes: true, change: scaleTo(4), size: 4},
		{name: "scale down/evict Pod", call: "evict Pod", change: scaleTo(2), size: 2},
		{name: "scale down with volumes/remove member", call: "remove member", volumes: true, change: scaleTo(2), size: 2},
		{name: "scale down with volumes/delete PersistentVolumeClaim", call: "delete PersistentVolumeClaim", volumes: true, change: scaleTo(2), size: 2},
		{name: "upgrade with volumes/evict Pod", call: "evict Pod", volumes: true, change: upgrade, size: 3},
		{name: "upgrade with volumes/move leader", call: "move leader", volumes: true, change: upgrade, size: 3},
		{name: "upgrade/remove member", call: "remove member", change: upgrade, size: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := newNamespace(t)
			runEtcdKubelet(t, ns)
			crash := &crashPoint{call: tt.call}
			first := runReconciler(t, cfg, ns, &controller.Reconciler{Dial: crashingDial(crash)},
				func(c client.Client) client.Client { return crashingClient{c, crash} })
			t.Cleanup(func() { _ = first.stop() })

			c := newCluster(ns, "crash", 3, "3.5.21")
			if tt.volumes {
				withVolumes(c)
			}
			if tt.change == nil {
				crash.arm(first.cancel)
			}
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			var key string
			if tt.change != nil {
				waitConverged(t, c, 3, tt.volumes)
				key = putKey(t, c)
				crash.arm(first.cancel)
				patchCluster(t, c, tt.change)
			}
			waitFor(t, "the operator to crash right after "+tt.call, func() error {
				if !crash.hasFired() {
					return fmt.Errorf("no %q call yet; calls so far: %v", tt.call, crash.calls)
				}
				return nil
			})
			if err := first.stop(); err != nil {
				t.Fatalf("crashed manager: %v", err)
			}
			t.Logf("crashed after: %s", strings.Join(crash.calls, ", "))

			startReconciler(t, cfg, ns, &controller.Reconciler{})
			waitConverged(t, c, tt.size, tt.volumes)
			if key != "" {
				getKey(t, c, key)
			}
		})
	}
}

func crashingDial(crash *crashPoint) etcdadmin.Dialer {
	return func(endpoints []string, tlsConfig *tls.Config) (etcdadmin.Admin, error) {
		a, err := etcdadmin.Dial(endpoints, tlsConfig)
		if err != nil {
			return nil, err
		}
		return crashingAdmin{a, crash}, nil
	}
}

func patchCluster(t *testing.T, c *etcdv1beta2.EtcdCluster, change func(*etcdv1beta2.EtcdCluster)) {
	t.Helper()
	var got etcdv1beta2.EtcdCluster
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &got); err != nil {
		t.Fatal(err)
	}
	before := got.DeepCopy()
	change(&got)
	if err := k8s.Patch(context.Background(), &got, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// memberEndpoints are the client URLs of the cluster's running member pods.
func memberEndpoints(ctx context.Context, c *etcdv1beta2.EtcdCluster) ([]corev1.Pod, []string, error) {
	pods, err := memberPods(ctx, c.Namespace, c.Name)
	if err != nil {
		return nil, nil, err
	}
	var live []corev1.Pod
	var endpoints []string
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
			if p.Status.PodIP != "" {
				endpoints = append(endpoints, testEndpoint(c, p))
			}
		}
	}
	return live, endpoints, nil
}

// waitConverged waits until the cluster is what spec.size asks for, judged
// on etcd's membership: size started voters, one live pod per member and no
// other, one claim per member and no other (with volumes; none without),
// and status Running with every member ready.
func waitConverged(t *testing.T, c *etcdv1beta2.EtcdCluster, size int, volumes bool) {
	t.Helper()
	ctx := context.Background()
	waitForLong(t, fmt.Sprintf("%d healthy members, nothing more", size), 2*time.Minute, func() error {
		pods, endpoints, err := memberEndpoints(ctx, c)
		if err != nil {
			return err
		}
		tlsConfig, err := testClientTLS(ctx, c)
		if err != nil {
			return err
		}
		admin, err := etcdadmin.Dial(endpoints, tlsConfig)
		if err != nil {
			return err
		}
		defer func() { _ = admin.Close() }()
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ms, err := admin.Members(callCtx)
		if err != nil {
			return err
		}
		var members, podNames []string
		for _, m := range ms {
			if m.Name == "" || m.IsLearner {
				return fmt.Errorf("member %x (%v) is not a started voter yet", m.ID, m.PeerURLs)
			}
			members = append(members, m.Name)
		}
		for _, p := range pods {
			podNames = append(podNames, p.Name)
		}
		sort.Strings(members)
		sort.Strings(podNames)
		if len(members) != size || !reflect.DeepEqual(members, podNames) {
			return fmt.Errorf("members %v, pods %v: want %d of each, the same", members, podNames, size)
		}
		if err := claimsAre(ctx, c, members, volumes); err != nil {
			return err
		}
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		available := meta.FindStatusCondition(got.Status.Conditions, conditions.Available)
		if got.Status.Phase != etcdv1beta2.PhaseRunning || len(got.Status.Members.Ready) != size ||
			available == nil || available.Status != metav1.ConditionTrue {
			return fmt.Errorf("status phase %s, ready %v, reason %q, conditions %+v",
				got.Status.Phase, got.Status.Members.Ready, got.Status.Reason, got.Status.Conditions)
		}
		return nil
	})
}

// claimsAre checks that the live member claims (those with the cluster's
// labels) are exactly the members' (or none).
func claimsAre(ctx context.Context, c *etcdv1beta2.EtcdCluster, members []string, volumes bool) error {
	var claims corev1.PersistentVolumeClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(c.Namespace), client.MatchingLabels(desired.Selector(c.Name))); err != nil {
		return err
	}
	var live []string
	for _, pvc := range claims.Items {
		if pvc.DeletionTimestamp == nil {
			live = append(live, pvc.Name)
		}
	}
	sort.Strings(live)
	var want []string
	if volumes {
		for _, m := range members {
			want = append(want, desired.PVCName(m))
		}
	}
	if !reflect.DeepEqual(live, want) && (len(live) > 0 || len(want) > 0) {
		return fmt.Errorf("claims %v, want %v", live, want)
	}
	return nil
}

func withKV(t *testing.T, c *etcdv1beta2.EtcdCluster, use func(context.Context, *clientv3.Client) error) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "a key-value call", func() error {
		_, endpoints, err := memberEndpoints(ctx, c)
		if err != nil {
			return err
		}
		tlsConfig, err := testClientTLS(ctx, c)
		if err != nil {
			return err
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, TLS: tlsConfig})
		if err != nil {
			return err
		}
		defer func() { _ = cli.Close() }()
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return use(callCtx, cli)
	})
}

// putKey writes a key the cluster must keep; it returns the key.
func putKey(t *testing.T, c *etcdv1beta2.EtcdCluster) string {
	t.Helper()
	key := "acknowledged-" + string(c.UID)
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Put(ctx, key, "kept")
		return err
	})
	return key
}

func getKey(t *testing.T, c *etcdv1beta2.EtcdCluster, key string) {
	t.Helper()
	withKV(t, c, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return err
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "kept" {
			t.Fatalf("acknowledged write %s lost: read %v", key, resp.Kvs)
		}
		return nil
	})
}
