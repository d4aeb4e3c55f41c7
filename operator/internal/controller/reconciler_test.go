package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

func newCluster(ns, name string, size int, version string) *etcdv1beta2.EtcdCluster {
	return &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       etcdv1beta2.EtcdClusterSpec{Size: size, Version: version},
	}
}

func memberPods(ctx context.Context, ns, cluster string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "etcd", "etcd_cluster": cluster})
	return pods.Items, err
}

func ownedBy(obj metav1.Object, c *etcdv1beta2.EtcdCluster) error {
	if !metav1.IsControlledBy(obj, c) {
		return fmt.Errorf("%s is not controlled by EtcdCluster %s: %+v", obj.GetName(), c.Name, obj.GetOwnerReferences())
	}
	return nil
}

func TestCreateMakesServicesPodsAndStatus(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)

	c := newCluster(ns, "example", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	// v1beta1 CRDs cannot default fields: there the operator falls back to
	// the default repository itself (the pod image is checked below).
	if !legacyCRD() && c.Spec.Repository != etcdv1beta2.DefaultRepository {
		t.Errorf("repository defaulted to %q, want %q", c.Spec.Repository, etcdv1beta2.DefaultRepository)
	}

	waitFor(t, "the headless peer Service", func() error {
		var svc corev1.Service
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "example"}, &svc); err != nil {
			return err
		}
		if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || len(svc.Spec.Ports) != 2 {
			return fmt.Errorf("peer Service spec %+v", svc.Spec)
		}
		return ownedBy(&svc, c)
	})
	waitFor(t, "the client Service", func() error {
		var svc corev1.Service
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "example-client"}, &svc); err != nil {
			return err
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 2379 || svc.Spec.Selector["etcd_cluster"] != "example" {
			return fmt.Errorf("client Service spec %+v", svc.Spec)
		}
		return ownedBy(&svc, c)
	})

	var pods []corev1.Pod
	waitFor(t, "three member pods", func() (err error) {
		pods, err = memberPods(ctx, ns, "example")
		if err == nil && len(pods) != 3 {
			err = fmt.Errorf("%d pods", len(pods))
		}
		return err
	})
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "example-") || len(p.Name) != len("example-")+10 {
			t.Errorf("pod name %q is not example-<10 random characters>", p.Name)
		}
		if err := ownedBy(&p, c); err != nil {
			t.Error(err)
		}
		cmd := strings.Join(p.Spec.Containers[0].Command, " ")
		for _, want := range []string{
			"--initial-cluster-state=new",
			fmt.Sprintf("--initial-advertise-peer-urls=http://%s.example.%s.svc:2380", p.Name, ns),
		} {
			if !strings.Contains(cmd, want) {
				t.Errorf("pod %s command lacks %q: %s", p.Name, want, cmd)
			}
		}
		for _, other := range pods {
			if !strings.Contains(cmd, other.Name+"=http://"+other.Name+".example."+ns+".svc:2380") {
				t.Errorf("pod %s's --initial-cluster lacks %s", p.Name, other.Name)
			}
		}
		if p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.5.21" {
			t.Errorf("pod %s image %q", p.Name, p.Spec.Containers[0].Image)
		}
	}

	waitFor(t, "status of a cluster being created", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		st := got.Status
		if st.Phase != etcdv1beta2.PhaseCreating || st.ServiceName != "example-client" || st.ClientPort != 2379 ||
			st.ObservedGeneration != got.Generation || st.CurrentVersion != "3.5.21" || st.Size != 3 || st.ReadyMembers != "0/3" {
			return fmt.Errorf("status %+v", st)
		}
		available := meta.FindStatusCondition(st.Conditions, conditions.Available)
		if available == nil || available.Status != metav1.ConditionFalse || available.Reason != conditions.ReasonBootstrapping {
			return fmt.Errorf("Available condition %+v", available)
		}
		for _, ct := range []string{conditions.Scaling, conditions.Recovering, conditions.Upgrading} {
			if meta.FindStatusCondition(st.Conditions, ct) == nil {
				return fmt.Errorf("no %s condition", ct)
			}
		}
		return nil
	})

	// Later passes see the pods and must not bootstrap a second cluster.
	if pods, err := memberPods(ctx, ns, "example"); err != nil || len(pods) != 3 {
		t.Fatalf("after status settled: %d pods (%v), want 3", len(pods), err)
	}
}

func TestPausedClusterIsLeftAlone(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)

	c := newCluster(ns, "paused", 3, "3.5.21")
	c.Spec.Paused = true
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "status says paused", func() error {
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		if !got.Status.ControlPaused || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
	pods, err := memberPods(ctx, ns, "paused")
	if err != nil || len(pods) != 0 {
		t.Fatalf("paused cluster got %d pods (%v)", len(pods), err)
	}
	var svcs corev1.ServiceList
	if err := k8s.List(ctx, &svcs, client.InNamespace(ns)); err != nil || len(svcs.Items) != 0 {
		t.Fatalf("paused cluster got %d Services (%v)", len(svcs.Items), err)
	}
}

// getCluster reads c as the API server has it now.
func getCluster(ctx context.Context, c *etcdv1beta2.EtcdCluster) (*etcdv1beta2.EtcdCluster, error) {
	var got etcdv1beta2.EtcdCluster
	err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got)
	return &got, err
}

func setVersion(ctx context.Context, c *etcdv1beta2.EtcdCluster, v string) error {
	return k8s.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"`+v+`"}}`)))
}

// waitForCurrentVersion waits until the operator reports the version the members run.
func waitForCurrentVersion(t *testing.T, c *etcdv1beta2.EtcdCluster, want string) {
	t.Helper()
	waitFor(t, "status.currentVersion "+want, func() error {
		got, err := getCluster(context.Background(), c)
		if err == nil && got.Status.CurrentVersion != want {
			err = fmt.Errorf("status.currentVersion %q", got.Status.CurrentVersion)
		}
		return err
	})
}

// Going 3.4 → 3.5 → 3.6 while the members still run 3.4 is refused: by the
// API where the CRD's CEL rules run (they compare with status.currentVersion),
// by the operator where they do not (the legacy CRD, Kubernetes < 1.25). The
// members stay on 3.4.37 either way.
func TestOperatorRefusesSkippingAMinorRelease(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)

	c := newCluster(ns, "skew", 3, "3.4.37")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "members created at 3.4.37", func() error {
		pods, err := memberPods(ctx, ns, "skew")
		if err == nil && len(pods) != 3 {
			err = fmt.Errorf("%d pods", len(pods))
		}
		return err
	})
	waitForCurrentVersion(t, c, "3.4.37")
	if err := setVersion(ctx, c, "3.5.21"); err != nil {
		t.Fatalf("setting version 3.5.21: %v", err)
	}
	err := setVersion(ctx, c, "3.6.5")
	switch {
	case celRules(t) && !legacyCRD():
		if err == nil || !strings.Contains(err.Error(), "version skew refused") {
			t.Fatalf("setting version 3.6.5 while the members run 3.4.37: %v, want the API to refuse it", err)
		}
		t.Logf("refused as it should be: %v", err)
	case err != nil:
		t.Fatalf("setting version 3.6.5: %v", err)
	default:
		waitFor(t, "Upgrading condition refuses the skew", func() error {
			got, err := getCluster(ctx, c)
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != conditions.ReasonVersionSkewRefused ||
				got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("Upgrading condition %+v", cond)
			}
			if !strings.Contains(got.Status.Reason, "one minor release at a time") {
				return fmt.Errorf("status.reason %q does not explain the refusal", got.Status.Reason)
			}
			return nil
		})
	}
	pods, err := memberPods(ctx, ns, "skew")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.4.37" {
			t.Errorf("pod %s changed to %s despite the refusal", p.Name, p.Spec.Containers[0].Image)
		}
	}
}

// 3.5 to 3.6 is refused until the members run a 3.5 patch etcd's upgrade
// guide allows 3.6 from (plan.MinorUpgradeFloors): by the API where CEL
// rules run, else by the operator, with a condition and status.reason that
// say which patch to set first.
func TestOperatorRefusesMinorUpgradeFromAnOldPatch(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)

	c := newCluster(ns, "old-patch", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitForCurrentVersion(t, c, "3.5.21")
	err := setVersion(ctx, c, "3.6.16")
	switch {
	case celRules(t) && !legacyCRD():
		if err == nil || !strings.Contains(err.Error(), "upgrade to 3.6 refused") || !strings.Contains(err.Error(), "3.5.32") {
			t.Fatalf("setting version 3.6.16 while the members run 3.5.21: %v, want the API to refuse it naming 3.5.32", err)
		}
		t.Logf("refused as it should be: %v", err)
	case err != nil:
		t.Fatalf("setting version 3.6.16: %v", err)
	default:
		waitFor(t, "Upgrading condition refuses the old patch", func() error {
			got, err := getCluster(ctx, c)
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != conditions.ReasonOldPatchRefused ||
				got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("Upgrading condition %+v", cond)
			}
			if !strings.Contains(got.Status.Reason, "3.5.32") {
				return fmt.Errorf("status.reason %q does not say which patch to set first", got.Status.Reason)
			}
			return nil
		})
	}
	// The way the refusal names is open: the patch first.
	if err := setVersion(ctx, c, "3.5.36"); err != nil {
		t.Fatalf("setting version 3.5.36 after the refusal: %v", err)
	}
}

// A rollout can always be aborted: spec.version set back to the
// status.currentVersion the operator reports is accepted, where the CRD used
// to refuse anything lower than the previous spec.version.
func TestRolloutCanBeAborted(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, nil)

	c := newCluster(ns, "abort", 3, "3.5.36")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitForCurrentVersion(t, c, "3.5.36")
	if err := setVersion(ctx, c, "3.6.16"); err != nil {
		t.Fatalf("setting version 3.6.16: %v", err)
	}
	if err := setVersion(ctx, c, "3.5.36"); err != nil {
		t.Fatalf("setting version 3.5.36 back while the members run it: %v", err)
	}
	waitFor(t, "nothing to roll any more", func() error {
		got, err := getCluster(ctx, c)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, conditions.Upgrading)
		if cond == nil || cond.Status != metav1.ConditionFalse || got.Status.ObservedGeneration != got.Generation ||
			got.Status.TargetVersion != "" || got.Status.CurrentVersion != "3.5.36" {
			return fmt.Errorf("Upgrading condition %+v, status %+v", cond, got.Status)
		}
		return nil
	})
}
