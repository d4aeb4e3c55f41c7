package main

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
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdproof/etcdproof/internal/loopback"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// fakeKubelet plays the kubelet and the pod network for member pods, which
// envtest lacks: each pod of a cluster gets a real etcd member on loopback
// named like the pod, an IP, and phase Running; dial routes pod IPs to the
// members.
type fakeKubelet struct {
	c  client.Client
	ns string

	mu     sync.Mutex
	ips    map[string]string // pod → IP
	routes map[string]string // "http://<IP>:2379" → member's client URL
}

func newFakeKubelet(t *testing.T, c client.Client, ns string) *fakeKubelet {
	k := &fakeKubelet{c: c, ns: ns, ips: map[string]string{}, routes: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				return false, nil
			}
			for i := range pods.Items {
				p := &pods.Items[i]
				k.mu.Lock()
				ip, known := k.ips[p.Name]
				k.mu.Unlock()
				if !known || p.Status.PodIP != "" || p.DeletionTimestamp != nil {
					continue
				}
				p.Status.PodIP = ip
				p.Status.Phase = corev1.PodRunning
				_ = c.Status().Update(ctx, p)
			}
			return false, nil
		})
	}()
	return k
}

func (k *fakeKubelet) dial(endpoints []string, tlsConfig *tls.Config) (etcdadmin.Admin, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var routed []string
	for _, ep := range endpoints {
		if r, ok := k.routes[ep]; ok {
			routed = append(routed, r)
		}
	}
	return etcdadmin.Dial(routed, tlsConfig)
}

// runMembers waits for the size pods the operator creates for a new
// cluster, then starts their members as one etcd cluster.
func (k *fakeKubelet) runMembers(t *testing.T, cluster string, size int) []corev1.Pod {
	t.Helper()
	ctx := context.Background()
	var pods []corev1.Pod
	waitFor(t, fmt.Sprintf("%d pods of cluster %s", size, cluster), func() (err error) {
		pods, err = memberPods(ctx, k.c, k.ns, cluster)
		if err == nil && len(pods) != size {
			err = fmt.Errorf("%d pods", len(pods))
		}
		return err
	})
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
		cfg.InitialClusterToken = cluster
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			t.Fatalf("starting member %s: %v", p.Name, err)
		}
		members[p.Name] = e
		t.Cleanup(e.Close)
	}
	for name, e := range members {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("member %s did not become ready", name)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range pods {
		ip := fmt.Sprintf("10.0.%d.%d", len(k.ips)/250, len(k.ips)%250+1)
		k.ips[p.Name] = ip
		k.routes["http://"+ip+":2379"] = "http://" + members[p.Name].Clients[0].Addr().String()
	}
	return pods
}

func memberPods(ctx context.Context, c client.Client, ns, cluster string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "etcd", "etcd_cluster": cluster})
	return pods.Items, err
}

// waitFor polls check until it returns nil; it fails the test with the last
// error if that takes longer than a minute.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) {
			last = check()
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}
