package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// TestAnswersOfAnotherClusterAreRefused: when the addresses of a cluster's
// member pods reach the members of another etcd cluster (pod IPs reused
// after the pods went, a stale cache), their member list and status are
// refused: the operator must not act on the other cluster, nor on its own
// pods because of what the other cluster said.
func TestAnswersOfAnotherClusterAreRefused(t *testing.T) {
	needAPIServer(t)
	currentEraOnly(t)
	ctx := context.Background()
	network := &fakeNetwork{routes: map[string]string{}}
	c, pods, _ := runningClusterOn(t, &controller.Reconciler{}, network, "ours", 3)

	// Another cluster: one member, its own cluster ID, a name that is no pod of ours.
	stranger := startMembers(t, []corev1.Pod{{}})
	var foreign string
	for _, e := range stranger {
		foreign = "http://" + e.Clients[0].Addr().String()
	}
	other, err := etcdadmin.Dial([]string{foreign}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	before, err := other.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	network.mu.Lock()
	for ep := range network.routes {
		network.routes[ep] = foreign
	}
	network.mu.Unlock()
	// A pass now, not at the next steady poll.
	if err := k8s.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test/poke":"1"}}}`))); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		after, err := other.Members(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) || after[0].ID != before[0].ID {
			t.Fatalf("the operator changed another etcd cluster's membership: %+v, was %+v", after, before)
		}
		got, err := memberPods(ctx, c.Namespace, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if !hasLivePod(got, p.Name) {
				t.Fatalf("pod %s was deleted on the word of another etcd cluster", p.Name)
			}
		}
		if len(got) != len(pods) {
			t.Fatalf("%d member pods, want %d: the operator acted on another cluster's member list", len(got), len(pods))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func hasLivePod(pods []corev1.Pod, name string) bool {
	for _, p := range pods {
		if p.Name == name && p.DeletionTimestamp == nil {
			return true
		}
	}
	return false
}
