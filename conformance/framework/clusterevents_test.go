package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

const (
	eventsCheck       = "create"
	eventsOperatorNS  = "etcd-operator-system"
	eventsOperatorApp = "etcd-operator"
)

// Against a real kube-apiserver (no kubelet: the test writes the pods'
// status as a kubelet would): a member pod's life, a Kubernetes Event and
// its repeat, and the operator's pods replaced are recorded in the order
// they happened; what is not the check's (the suite's traffic pod, an
// event older than the recording, pods of other apps) is not.
func TestClusterEventsRecordsAMemberPodsLifeEventsAndTheOperator(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	kubeconfig, _ := apiservertest.Start(t)
	p := &profile.Profile{
		Operator: profile.Operator{Namespace: eventsOperatorNS, Deployment: "etcd-operator"},
		Cluster:  profile.Cluster{Kind: "EtcdCluster", MemberSelector: "app=etcd,etcd_cluster={{ .Name }}"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := NewEnv(ctx, Options{Kubeconfig: kubeconfig}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	kube := e.Kube
	ns := "etcdproof-create-1"
	for _, name := range []string{eventsOperatorNS, ns} {
		must(t, create(ctx, kube.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	}
	operatorLabels := map[string]string{"app": eventsOperatorApp}
	must(t, create(ctx, kube.AppsV1().Deployments(eventsOperatorNS), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-operator"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: operatorLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: operatorLabels}, Spec: podSpec()}},
	}))
	must(t, create(ctx, kube.CoreV1().Pods(eventsOperatorNS), newPod("etcd-operator-old", operatorLabels)))
	must(t, create(ctx, kube.CoreV1().Pods(eventsOperatorNS), newPod("webhook", map[string]string{"app": "webhook"})))
	must(t, create(ctx, kube.CoreV1().Events(ns), newEvent(ns, "demo-gone", "Killing", corev1.EventTypeNormal, time.Now().Add(-time.Hour))))

	rec := report.NewRecorder()
	started := time.Now()
	r, err := e.RecordClusterEvents(ctx, ns, "demo", func(ev report.Event) { rec.Event(eventsCheck, ev) })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	pods := kube.CoreV1().Pods(ns)

	// The suite's own traffic pod and its Normal events are not the cluster's.
	must(t, create(ctx, pods, newPod(trafficPodPrefix+"create", map[string]string{"app.kubernetes.io/name": trafficPodLabel})))
	must(t, create(ctx, kube.CoreV1().Events(ns), newEvent(ns, trafficPodPrefix+"create", "Scheduled", corev1.EventTypeNormal, time.Now())))

	must(t, create(ctx, pods, newPod("demo-a", map[string]string{"app": "etcd", "etcd_cluster": "demo"})))
	waitForEvent(t, rec, "pod/demo-a", "Created", "")
	must(t, pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "demo-a"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{}))
	waitForEvent(t, rec, "pod/demo-a", "Scheduled", "")
	updateStatus(ctx, t, pods, "demo-a", func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "etcd", Image: "etcd", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	waitForEvent(t, rec, "pod/demo-a", "Ready", "")
	updateStatus(ctx, t, pods, "demo-a", func(s *corev1.PodStatus) {
		for i := range s.Conditions {
			if s.Conditions[i].Type == corev1.PodReady {
				s.Conditions[i].Status, s.Conditions[i].Reason = corev1.ConditionFalse, "ContainersNotReady"
			}
		}
		c := &s.ContainerStatuses[0]
		c.Ready, c.RestartCount = false, 1
		c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
	})
	waitForEvent(t, rec, "pod/demo-a", "Unready", "")

	backOff := newEvent(ns, "demo-a", "BackOff", corev1.EventTypeWarning, time.Now())
	must(t, create(ctx, kube.CoreV1().Events(ns), backOff))
	waitForEvent(t, rec, "pod/demo-a", "BackOff", "")
	backOff, err = kube.CoreV1().Events(ns).Get(ctx, backOff.Name, metav1.GetOptions{})
	must(t, err)
	backOff.Count, backOff.LastTimestamp = 2, metav1.Now()
	_, err = kube.CoreV1().Events(ns).Update(ctx, backOff, metav1.UpdateOptions{})
	must(t, err)
	waitForEvent(t, rec, "pod/demo-a", "BackOff", "seen 2 times")

	operatorPods := kube.CoreV1().Pods(eventsOperatorNS)
	must(t, create(ctx, operatorPods, newPod("etcd-operator-new", operatorLabels)))
	waitForEvent(t, rec, "pod/etcd-operator-new", "Created", "")
	must(t, operatorPods.Delete(ctx, "etcd-operator-old", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}))
	must(t, operatorPods.Delete(ctx, "webhook", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}))
	waitForEvent(t, rec, "pod/etcd-operator-old", "Deleted", "")

	// A bound pod waits for its kubelet: terminating first, then gone.
	must(t, pods.Delete(ctx, "demo-a", metav1.DeleteOptions{}))
	waitForEvent(t, rec, "pod/demo-a", "Terminating", "")
	must(t, pods.Delete(ctx, "demo-a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}))
	waitForEvent(t, rec, "pod/demo-a", "Deleted", "")
	r.Stop()
	ended := time.Now()

	want := []string{
		"pod pod/demo-a Created normal",
		"pod pod/demo-a Scheduled normal on node node-1",
		"pod pod/demo-a Running normal",
		"pod pod/demo-a Ready normal",
		"pod pod/demo-a Restarted warning container etcd restarted (1 restarts): OOMKilled, exit code 137",
		"pod pod/demo-a Unready warning ContainersNotReady",
		"event pod/demo-a BackOff warning Back-off restarting failed container etcd in pod demo-a",
		"event pod/demo-a BackOff warning Back-off restarting failed container etcd in pod demo-a (seen 2 times)",
		"operator pod/etcd-operator-new Created normal",
		// No grace period: the API marks it, then removes it.
		"operator pod/etcd-operator-old Terminating normal grace period 0 s",
		"operator pod/etcd-operator-old Deleted normal",
		"pod pod/demo-a Terminating normal grace period 30 s",
		"pod pod/demo-a Deleted normal",
	}
	var got []string
	for _, ev := range rec.Events(eventsCheck) {
		got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s %s", ev.Source, ev.Object, ev.Reason, ev.Level, ev.Message)))
		if ev.Time.Before(started) || ev.Time.After(ended) {
			t.Errorf("%s %s at %s, outside the recording (%s to %s)", ev.Object, ev.Reason, ev.Time, started, ended)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// creator is any typed client's Create.
type creator[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}

func create[T any](ctx context.Context, c creator[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "etcd"}}}
}

func newPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: podSpec()}
}

func newEvent(ns, pod, reason, typ string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", pod, strings.ToLower(reason)), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
		Reason:         reason, Type: typ, Count: 1, Message: "Back-off restarting failed container etcd in pod " + pod,
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Source: corev1.EventSource{Component: "kubelet"},
	}
}

// updateStatus writes a pod's status as its kubelet would.
func updateStatus(ctx context.Context, t *testing.T, pods interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Pod, error)
	UpdateStatus(context.Context, *corev1.Pod, metav1.UpdateOptions) (*corev1.Pod, error)
}, name string, change func(*corev1.PodStatus)) {
	t.Helper()
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	change(&p.Status)
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must(t, err)
}

// waitForEvent waits until the check holds an event of object with reason
// and a message containing message: each step of the test waits for its
// last event, so the events' order is the order of the steps.
func waitForEvent(t *testing.T, rec *report.Recorder, object, reason, message string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, ev := range rec.Events(eventsCheck) {
			if ev.Object == object && ev.Reason == reason && strings.Contains(ev.Message, message) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s %s %q recorded: %v", object, reason, message, rec.Events(eventsCheck))
	}
}
