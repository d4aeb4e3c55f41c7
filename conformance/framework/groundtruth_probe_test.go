package framework

import (
	"context"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdproof/etcdproof/conformance/internal/apiservertest"
	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/report"
)

// A member whose connection goes silent (a pod being deleted while the
// suite asks it) costs a ground truth one timeout: it is not asked the
// probe's later questions, and the members that answer give the member
// list and the hashes. Against a real API server and real etcd members.
func TestGroundTruthAsksASilentMemberOnce(t *testing.T) {
	t.Parallel() // its own API server and members: nothing shared (TestMain)
	e, c, members := demoClusterOnRealMembers(t)
	ctx := context.Background()
	// demo-0 is first in name order, as the old probe asked it first.
	ports := map[string]int{"demo-0": silentPort(t), "demo-1": forwardPort(t, members.Endpoints[1]), "demo-2": forwardPort(t, members.Endpoints[2])}
	c.forward = func(pod string) (int, func(), error) { return ports[pod], func() {}, nil }
	for name := range ports {
		createRunningMemberPod(t, e, c, name)
	}
	var events []report.Event
	c.RecordMembershipChanges(func(ev report.Event) { events = append(events, ev) })

	truth, err := c.GroundTruth(ctx, Want{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(truth.Members) != 3 {
		t.Errorf("members = %+v, want the 3 that demo-1 and demo-2 list", truth.Members)
	}
	if !slices.ContainsFunc(truth.Problems, func(p string) bool { return strings.HasPrefix(p, ProblemUnreachable+": demo-0") }) {
		t.Errorf("problems = %q, want demo-0 unreachable", truth.Problems)
	}
	for _, pt := range truth.Pods {
		if pt.Pod != "demo-0" && (pt.Error != "" || pt.Hash == 0) {
			t.Errorf("%s: %+v, want its status and hash", pt.Pod, pt)
		}
	}
	i := slices.IndexFunc(events, func(ev report.Event) bool { return ev.Reason == "SlowGroundTruth" })
	if i < 0 {
		t.Fatalf("events = %+v, want the slow probe (it waited on demo-0) recorded", events)
	}
	for _, part := range strings.Split(events[i].Message, "; ") {
		if strings.Contains(part, "demo-0: ") && (!strings.Contains(part, "status") || strings.Contains(part, "member list") || strings.Contains(part, "hashKV")) {
			t.Errorf("demo-0 was asked %q, want its status only", part)
		}
	}
}

// demoClusterOnRealMembers starts a real API server and three real etcd
// members, and an EtcdCluster "demo" whose member pods the test creates
// (createRunningMemberPod) and whose port-forwards it stands in for.
func demoClusterOnRealMembers(t *testing.T) (*Env, *EtcdCluster, *etcdtest.Cluster) {
	t.Helper()
	kubeconfig, _ := apiservertest.Start(t)
	members := etcdtest.StartCluster(t, 3)
	p := &profile.Profile{Cluster: profile.Cluster{Kind: "EtcdCluster", MemberSelector: "etcd_cluster={{.Name}}", ClientPort: 2379}}
	e, err := NewEnv(context.Background(), Options{Kubeconfig: kubeconfig, ReportDir: t.TempDir()}, p, &profile.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return e, &EtcdCluster{env: e, Name: "demo", Namespace: metav1.NamespaceDefault}, members
}

// createRunningMemberPod creates a member pod of c that its kubelet
// reports running and ready, as a member is until its kubelet sees it stop.
func createRunningMemberPod(t *testing.T, e *Env, c *EtcdCluster, name string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"etcd_cluster": c.Name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "quay.io/coreos/etcd:v3.6.16"}}}}
	created, err := e.Kube.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := e.Kube.CoreV1().Pods(c.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// silentPort accepts connections and never answers, as a port-forward to
// a pod whose etcd has stopped serving does.
func silentPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range held {
			_ = conn.Close()
		}
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// forwardPort relays a port of 127.0.0.1 to a member's client URL, as a
// port-forward does.
func forwardPort(t *testing.T, endpoint string) int {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return listenLocal(t, func(in net.Conn) {
		out, err := net.Dial("tcp", u.Host)
		if err != nil {
			_ = in.Close()
			return
		}
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	})
}

// listenLocal is a local port, closed when the test ends, that hands every
// connection to serve.
func listenLocal(t *testing.T, serve func(net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			serve(conn)
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}
