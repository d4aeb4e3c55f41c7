package controller_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/etcdadmin"
)

// TestHungClusterDoesNotHoldUpOthers: a pass that hangs on one cluster's
// etcd (a member behind a black-holed network, say) must not keep the
// operator from reconciling the other clusters: with one worker every other
// cluster waited behind it.
func TestHungClusterDoesNotHoldUpOthers(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	dialed := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	hang := func([]string, *tls.Config) (etcdadmin.Admin, error) {
		once.Do(func() { close(dialed) })
		<-release
		return nil, errors.New("released")
	}
	startReconciler(t, cfg, ns, &controller.Reconciler{Dial: hang})
	t.Cleanup(func() { close(release) }) // before the manager stops (cleanups run last first)

	hung := newCluster(ns, "hung", 1, "3.5.21")
	if err := k8s.Create(ctx, hung); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hung cluster's member pod, given an IP", func() error {
		pods, err := memberPods(ctx, ns, hung.Name)
		if err != nil || len(pods) != 1 {
			return fmt.Errorf("%d pods (%v)", len(pods), err)
		}
		p := pods[0]
		p.Status.PodIP, p.Status.Phase = "10.0.0.1", corev1.PodRunning
		return k8s.Status().Update(ctx, &p)
	})
	<-dialed // a worker now hangs on the cluster's etcd

	other := newCluster(ns, "other", 1, "3.5.21")
	if err := k8s.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other cluster's member pod", func() error {
		pods, err := memberPods(ctx, ns, other.Name)
		if err == nil && len(pods) != 1 {
			err = fmt.Errorf("%d pods; the other cluster waits behind the hung one", len(pods))
		}
		return err
	})
}
