package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// conditionLog records every condition the cluster's status carried, from
// a watch: a condition that holds for one status write only (the pass that
// removes a stuck member) is seen too.
type conditionLog struct {
	mu   sync.Mutex
	seen []metav1.Condition
}

// watchConditions starts recording c's conditions until the test ends.
func watchConditions(t *testing.T, c *etcdv1beta2.EtcdCluster) *conditionLog {
	t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &etcdv1beta2.EtcdClusterList{}, client.InNamespace(c.Namespace))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	log := &conditionLog{}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			got, ok := ev.Object.(*etcdv1beta2.EtcdCluster)
			if !ok || got.Name != c.Name {
				continue
			}
			log.mu.Lock()
			log.seen = append(log.seen, got.Status.Conditions...)
			log.mu.Unlock()
		}
	}()
	return log
}

// find returns the first recorded condition of type t with reason whose
// message contains every one of words.
func (l *conditionLog) find(t, reason string, words ...string) (metav1.Condition, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.seen {
		if c.Type == t && c.Reason == reason && containsAll(c.Message, words) {
			return c, true
		}
	}
	return metav1.Condition{}, false
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// wantCondition waits until the log has a condition of type t with reason
// whose message contains every one of words.
func (l *conditionLog) wantCondition(t *testing.T, typ, reason string, words ...string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("condition %s with reason %s saying %q", typ, reason, words), func() error {
		if _, ok := l.find(typ, reason, words...); ok {
			return nil
		}
		if c, ok := l.find(typ, reason); ok {
			return fmt.Errorf("only seen saying %q", c.Message)
		}
		return fmt.Errorf("not seen")
	})
}

// peerName is a member's name, or the pod name in its peer URL before it started.
func peerName(m etcdadmin.Member) string {
	if m.Name != "" || len(m.PeerURLs) == 0 {
		return m.Name
	}
	return strings.SplitN(strings.TrimPrefix(m.PeerURLs[0], "http://"), ".", 2)[0]
}
