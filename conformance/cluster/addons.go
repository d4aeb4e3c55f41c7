package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/version"
	apimachinerywait "k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/klient/wait/conditions"

	kindconfigs "github.com/etcdproof/etcdproof/kind-configs"
)

const (
	// readyzTimeout bounds the probe that decides whether to reuse a cluster.
	readyzTimeout = 10 * time.Second
	// systemReadyTimeout bounds the wait for nodes and system workloads.
	systemReadyTimeout = 5 * time.Minute
	systemPollInterval = 2 * time.Second
)

// addonRetries bounds the attempts at installing the add-ons while the
// API server of a cluster just made (or a reused one whose node container
// was started again) still resets connections.
const addonRetries = 5

// installAddons makes a new or reused cluster whole: kube-router where it
// replaces kind's pod network, local-path storage that works on old
// releases. Each step is idempotent, so an attempt the API server cut
// short (a connection reset or refused while it settles: seen once on a
// cluster kind had just reported ready) is made again.
func (k *Kind) installAddons(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= addonRetries; attempt++ {
		if err = k.installAddonsOnce(ctx); err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * systemPollInterval):
		}
	}
	return fmt.Errorf("after %d attempts: %w", addonRetries, err)
}

// transient tells an API server that is not answering yet from a refusal.
// Discovery flattens its cause into the message ("failed to get server
// groups: ... connection reset by peer"), hence the text as a last resort.
func transient(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsConnectionRefused(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "connection refused")
}

func (k *Kind) installAddonsOnce(ctx context.Context) error {
	r, err := resources.New(k.rest)
	if err != nil {
		return err
	}
	if k.spec.KubeRouterImage != "" {
		if err := installKubeRouter(ctx, r, k.spec.KubeRouterImage); err != nil {
			return err
		}
	}
	if err := forwardDNSUpstream(ctx, r); err != nil {
		return err
	}
	if err := labelNodesOS(ctx, r); err != nil {
		return err
	}
	if k.spec.Workers > 0 {
		if err := keepDNSOnTheControlPlane(ctx, r); err != nil {
			return err
		}
	}
	v, err := k.spec.version()
	if err != nil {
		return err
	}
	if v.LessThan(storagePriorityFixedFrom) {
		return dropStoragePriority(ctx, r)
	}
	return nil
}

// forwardDNSUpstream turns kubeadm 1.13's Corefile line `proxy .
// /etc/resolv.conf` into `forward`: offline old nodes hold CoreDNS 1.6.2
// (Spec.DNSImageTag), which dropped the proxy plugin in 1.5 and exits with
// "Unknown directive 'proxy'". Its crash-looping pods are deleted, so the
// Deployment starts them again on the new Corefile now rather than after
// their back-off.
func forwardDNSUpstream(ctx context.Context, r *resources.Resources) error {
	changed, err := replaceInConfigMap(ctx, r, "kube-system", "coredns", "Corefile", "\n    proxy . ", "\n    forward . ")
	if err != nil {
		return fmt.Errorf("CoreDNS's Corefile: %w", err)
	}
	if !changed {
		return nil
	}
	var pods corev1.PodList
	if err := r.WithNamespace("kube-system").List(ctx, &pods, resources.WithLabelSelector("k8s-app=kube-dns")); err != nil {
		return fmt.Errorf("CoreDNS's pods: %w", err)
	}
	for i := range pods.Items {
		if err := r.Delete(ctx, &pods.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("restarting CoreDNS pod %s: %w", pods.Items[i].Name, err)
		}
	}
	return nil
}

// installKubeRouter runs kube-router as the pod network, with image.
func installKubeRouter(ctx context.Context, r *resources.Resources, image string) error {
	setImage := decoder.MutateOption(func(obj k8s.Object) error {
		if ds, ok := obj.(*appsv1.DaemonSet); ok {
			for i := range ds.Spec.Template.Spec.InitContainers {
				ds.Spec.Template.Spec.InitContainers[i].Image = image
			}
			for i := range ds.Spec.Template.Spec.Containers {
				ds.Spec.Template.Spec.Containers[i].Image = image
			}
		}
		return nil
	})
	err := decoder.DecodeEach(ctx, bytes.NewReader(kindconfigs.KubeRouter), decoder.CreateIgnoreAlreadyExists(r), setImage)
	if err != nil {
		return fmt.Errorf("installing kube-router %s: %w", image, err)
	}
	return nil
}

// labelNodesOS gives each node the kubernetes.io/os label kubelets set from
// 1.14 on, copied from beta.kubernetes.io/os: a 1.13 kubelet sets only the
// beta label, and kind's local-path-provisioner (like most workloads since)
// selects kubernetes.io/os, so it would stay Pending.
func labelNodesOS(ctx context.Context, r *resources.Resources) error {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		stable, beta := n.Labels[corev1.LabelOSStable], n.Labels["beta.kubernetes.io/os"]
		if stable != "" || beta == "" {
			continue
		}
		n.Labels[corev1.LabelOSStable] = beta
		if err := r.Update(ctx, n); err != nil {
			return fmt.Errorf("labelling node %s %s=%s: %w", n.Name, corev1.LabelOSStable, beta, err)
		}
	}
	return nil
}

// keepDNSOnTheControlPlane schedules CoreDNS on the control-plane node,
// which no check stops or drains: kubeadm's two replicas may land on one
// worker, and the node-loss check stopping that worker took all cluster
// DNS with it, so no replacement member could resolve its peers (its
// verdict then about DNS, not the operator). kubeadm's CoreDNS tolerates the
// control plane's taint; the node-role label is "master" before 1.20.
func keepDNSOnTheControlPlane(ctx context.Context, r *resources.Resources) error {
	var d appsv1.Deployment
	if err := r.Get(ctx, "coredns", "kube-system", &d); err != nil {
		return fmt.Errorf("CoreDNS's Deployment: %w", err)
	}
	term := func(role string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "node-role.kubernetes.io/" + role, Operator: corev1.NodeSelectorOpExists}}}
	}
	want := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term("control-plane"), term("master")}}
	spec := &d.Spec.Template.Spec
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	if equality.Semantic.DeepEqual(spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, want) {
		return nil
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = want
	if err := r.Update(ctx, &d); err != nil {
		return fmt.Errorf("keeping CoreDNS on the control plane: %w", err)
	}
	return nil
}

// storagePriorityFixedFrom is the first release that admits
// system-node-critical pods outside kube-system.
var storagePriorityFixedFrom = version.MustParseGeneric("v1.17.0")

// dropStoragePriority lets local-path-provisioner's helper pods start on
// releases before 1.17, which admit system-node-critical only in kube-system.
func dropStoragePriority(ctx context.Context, r *resources.Resources) error {
	if _, err := replaceInConfigMap(ctx, r, "local-path-storage", "local-path-config", "helperPod.yaml", "\n  priorityClassName: system-node-critical", ""); err != nil {
		return fmt.Errorf("local-path-provisioner's config: %w", err)
	}
	return nil
}

// replaceInConfigMap replaces the first old in the ConfigMap's data key with
// new and says whether old was there (nothing is written when it was not).
func replaceInConfigMap(ctx context.Context, r *resources.Resources, namespace, name, key, old, new string) (bool, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, name, namespace, &cm); err != nil {
		return false, err
	}
	value := cm.Data[key]
	if !strings.Contains(value, old) {
		return false, nil
	}
	cm.Data[key] = strings.Replace(value, old, new, 1)
	return true, r.Update(ctx, &cm)
}

// waitForSystem waits until every node is Ready and the system workloads
// rolled out, naming what it still waits for when it gives up.
func waitForSystem(ctx context.Context, r *resources.Resources, kubeRouter bool) error {
	c := conditions.New(r)
	waits := []systemWait{
		{"every node Ready", allNodesReady(r)},
		{"daemonset kube-system/kube-proxy", c.DaemonSetReady(daemonSet("kube-system", "kube-proxy"))},
	}
	if kubeRouter {
		waits = append(waits, systemWait{"daemonset kube-system/kube-router", c.DaemonSetReady(daemonSet("kube-system", "kube-router"))})
	}
	waits = append(waits,
		systemWait{"deployment kube-system/coredns", c.DeploymentAvailable("coredns", "kube-system")},
		systemWait{"deployment local-path-storage/local-path-provisioner", c.DeploymentAvailable("local-path-provisioner", "local-path-storage")},
	)
	ctx, cancel := context.WithTimeout(ctx, systemReadyTimeout)
	defer cancel()
	for _, w := range waits {
		err := wait.For(notFoundIsNotYet(w.cond), wait.WithContext(ctx), wait.WithInterval(systemPollInterval), wait.WithImmediate())
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", w.what, err)
		}
	}
	return nil
}

// systemWait is one thing waitForSystem waits for, named for its error.
type systemWait struct {
	what string
	cond apimachinerywait.ConditionWithContextFunc
}

func daemonSet(ns, name string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// notFoundIsNotYet keeps polling while an object is not created yet.
func notFoundIsNotYet(cond apimachinerywait.ConditionWithContextFunc) apimachinerywait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return done, err
	}
}

func allNodesReady(r *resources.Resources) apimachinerywait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := r.List(ctx, &nodes); err != nil {
			return false, err
		}
		if len(nodes.Items) == 0 {
			return false, nil
		}
		for _, n := range nodes.Items {
			ready := false
			for _, cond := range n.Status.Conditions {
				ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
			}
			if !ready {
				return false, nil
			}
		}
		return true, nil
	}
}
