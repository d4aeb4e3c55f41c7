package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/etcdproof/etcdproof/internal/loopback"
	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
)

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestServesProbesAndMetrics runs the operator as main wires it, against a
// real API server with no CRD yet, and reads its probes and /metrics. The
// operator registers the CRD itself (--create-crd): the v1 one, or the v1beta1
// one on an API server that refuses it (1.16).
func TestServesProbesAndMetrics(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set; run `make test`")
	}
	env := &envtest.Environment{}
	restCfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	o := options{namespace: "default", metricsAddr: loopback.Addr(t), probeAddr: loopback.Addr(t), createCRD: true, skipNameValidation: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	gates := kubecompat.Install()
	go func() { done <- run(ctx, restCfg, gates, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})

	scheme := runtime.NewScheme()
	if err := etcdv1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics", Namespace: "default"},
		Spec:       etcdv1beta2.EtcdClusterSpec{Size: 1, Version: "3.5.21", Paused: true},
	}
	waitFor(t, "an EtcdCluster created once the operator registered the CRD", func() error {
		return k8s.Create(ctx, c)
	})

	checks := []struct{ url, want string }{
		{"http://" + o.probeAddr + "/healthz", "ok"},
		{"http://" + o.probeAddr + "/readyz", "ok"},
		{"http://" + o.metricsAddr + "/readyz", "ok"}, // where coreos served it (--listen-addr)
		{"http://" + o.metricsAddr + "/metrics", `etcd_operator_cluster_members{cluster="metrics",namespace="default",state="ready"} 0`},
		{"http://" + o.metricsAddr + "/metrics", `controller_runtime_reconcile_total{controller="etcdcluster"`},
	}
	for _, chk := range checks {
		var last string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			code, body, err := get(chk.url)
			last = fmt.Sprintf("status %d, error %v", code, err)
			return err == nil && code == http.StatusOK && strings.Contains(body, chk.want), nil
		})
		if err != nil {
			t.Fatalf("%s never served %q (last: %s)", chk.url, chk.want, last)
		}
	}
}
