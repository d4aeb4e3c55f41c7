package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/controller"
	"github.com/etcdproof/etcdproof/operator/internal/desired"
)

// TestBackupPodThatNeverStartsFailsTheBackup: envtest has no kubelet, so a
// backup pod is never started, as one that no node can take (no room, a
// claim bound to an unreachable zone). Its activeDeadlineSeconds counts
// from the kubelet's start only, so it was waited on for ever. Once the
// start deadline is over (the reconciler's clock runs an hour ahead here),
// the attempt fails with a reason and a Warning Event, and its pod goes.
func TestBackupPodThatNeverStartsFailsTheBackup(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &controller.BackupReconciler{Client: mgr.GetClient(), Image: operatorImage,
		Now: func() time.Time { return time.Now().Add(time.Hour) }}
	if eventsRecorded(t) {
		r.Recorder = mgr.GetEventRecorder("etcd-operator")
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() { cancel(); <-done })

	b := &etcdv1beta2.EtcdBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: ns},
		Spec: etcdv1beta2.BackupSpec{
			EtcdEndpoints: []string{"http://example-client:2379"},
			StorageType:   etcdv1beta2.BackupStorageTypePVC,
			BackupSource:  etcdv1beta2.BackupSource{PVC: &etcdv1beta2.PVCSource{ClaimName: "backups", Path: "etcd.backup"}},
		},
	}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the EtcdBackup to fail for a pod that never started", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if st := b.Status; st.Succeeded || !strings.Contains(st.Reason, "did not start") || st.LastAttemptDate == nil {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	t.Logf("failed as it should: %s", b.Status.Reason)
	waitFor(t, "the backup pod to be deleted", func() error {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{desired.LabelBackup: b.Name}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				return fmt.Errorf("backup pod %s left", p.Name)
			}
		}
		return nil
	})
	if !eventsRecorded(t) {
		return
	}
	waitFor(t, "a Warning Event on the EtcdBackup", func() error {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == b.Name && e.Type == corev1.EventTypeWarning && e.Reason == "Backup Failed" {
				return nil
			}
		}
		return fmt.Errorf("%d events, no Warning \"Backup Failed\" for %s", len(events.Items), b.Name)
	})
}
