package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

func TestParseFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	t.Setenv(envCoreosNamespace, "")
	t.Setenv(envCoreosPodName, "")
	tests := []struct {
		name    string
		env     string
		args    []string
		wantErr string
		check   func(t *testing.T, o options)
	}{
		{name: "namespace is required", args: nil, wantErr: "--namespace is required"},
		{name: "namespace from the downward API", env: "ops", check: func(t *testing.T, o options) {
			if o.namespace != "ops" || o.leaderElectionNamespace != "ops" || o.clusterWide {
				t.Errorf("options %+v", o)
			}
			if o.unsafe != (plan.Options{}) || o.unsafeMembers != (desired.Unsafe{}) {
				t.Errorf("unsafe behaviour on by default: %+v %+v", o.unsafe, o.unsafeMembers)
			}
		}},
		{name: "cluster-wide needs no namespace", args: []string{"--cluster-wide"}, check: func(t *testing.T, o options) {
			if !o.clusterWide {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "leader election needs a namespace", args: []string{"--cluster-wide", "--leader-elect"}, wantErr: "--leader-election-namespace"},
		{name: "several workers by default", args: []string{"--namespace=a"}, check: func(t *testing.T, o options) {
			if o.workers < 2 {
				t.Errorf("%d workers by default: one slow cluster would hold up every other", o.workers)
			}
		}},
		{name: "workers", args: []string{"--namespace=a", "--max-concurrent-reconciles=8"}, check: func(t *testing.T, o options) {
			if o.workers != 8 {
				t.Errorf("%d workers, want 8", o.workers)
			}
		}},
		{name: "no worker", args: []string{"--namespace=a", "--max-concurrent-reconciles=0"}, wantErr: "at least 1"},
		{name: "metrics on loopback by default", args: []string{"--namespace=a"}, check: func(t *testing.T, o options) {
			if m := metricsOptions(o); m.BindAddress != "127.0.0.1:8080" || m.SecureServing {
				t.Errorf("metrics on %q (TLS %v): plain HTTP must stay on loopback unless asked for", m.BindAddress, m.SecureServing)
			}
		}},
		{name: "metrics over TLS on every interface", args: []string{"--namespace=a", "--metrics-cert-dir=/certs"}, check: func(t *testing.T, o options) {
			if m := metricsOptions(o); m.BindAddress != ":8080" || !m.SecureServing || m.CertDir != "/certs" {
				t.Errorf("metrics on %q, TLS %v, certificates in %q", m.BindAddress, m.SecureServing, m.CertDir)
			}
		}},
		{name: "metrics address asked for", args: []string{"--namespace=a", "--metrics-bind-address=:9090"}, check: func(t *testing.T, o options) {
			if m := metricsOptions(o); m.BindAddress != ":9090" || m.SecureServing {
				t.Errorf("metrics on %q (TLS %v), want :9090 as asked", m.BindAddress, m.SecureServing)
			}
		}},
		{name: "unknown flag", args: []string{"--namespace=a", "--bogus"}, wantErr: "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tt.env)
			o, _, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

// TestParseCoreosCommandLine: coreos etcd-operator v0.9.4's Deployment, every
// flag of its binary, and its environment work unchanged.
func TestParseCoreosCommandLine(t *testing.T) {
	allFlags := []string{"--listen-addr=:9090", "--chaos-level=1", "--gc-interval=5m", "--create-crd=false",
		"-logtostderr", "-alsologtostderr", "-v=2", "-stderrthreshold=INFO", "-vmodule=x=1", "-log_backtrace_at=x.go:1", "-log_dir=/tmp"}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(t *testing.T, o options)
	}{
		{name: "the book's Deployment", env: map[string]string{envCoreosNamespace: "ops", envCoreosPodName: "etcd-operator-1"},
			args: []string{}, check: func(t *testing.T, o options) {
				if o.namespace != "ops" || o.leaderElectionNamespace != "ops" || o.podName != "etcd-operator-1" {
					t.Errorf("namespace %q, lease namespace %q, pod %q", o.namespace, o.leaderElectionNamespace, o.podName)
				}
				if !o.createCRD || !o.leaderElect || o.metricsAddr != "127.0.0.1:8080" || len(o.withoutEffect) != 0 {
					t.Errorf("createCRD %v, leaderElect %v, metrics %q, no effect %v", o.createCRD, o.leaderElect, o.metricsAddr, o.withoutEffect)
				}
			}},
		{name: "ours wins over coreos' variables", env: map[string]string{"POD_NAMESPACE": "a", envCoreosNamespace: "b"},
			check: func(t *testing.T, o options) {
				if o.namespace != "a" || o.leaderElectionNamespace != "a" || o.leaderElect {
					t.Errorf("namespace %q, lease namespace %q, leaderElect %v", o.namespace, o.leaderElectionNamespace, o.leaderElect)
				}
			}},
		{name: "every coreos flag", env: map[string]string{envCoreosNamespace: "ops"}, args: append([]string{"-cluster-wide"}, allFlags...),
			check: func(t *testing.T, o options) {
				if !o.clusterWide || o.createCRD || o.metricsAddr != ":9090" {
					t.Errorf("clusterWide %v, createCRD %v, metrics %q", o.clusterWide, o.createCRD, o.metricsAddr)
				}
				want := []string{"chaos-level=1", "gc-interval=5m0s", "logtostderr=true", "alsologtostderr=true", "v=2",
					"stderrthreshold=INFO", "vmodule=x=1", "log_backtrace_at=x.go:1", "log_dir=/tmp"}
				if !slices.Equal(slices.Sorted(slices.Values(o.withoutEffect)), slices.Sorted(slices.Values(want))) {
					t.Errorf("flags without effect %v, want %v", o.withoutEffect, want)
				}
			}},
		{name: "version needs no namespace", args: []string{"--version"}, check: func(t *testing.T, o options) {
			if !o.coreos.printVersion {
				t.Error("--version not seen")
			}
		}},
		{name: "one metrics address", env: map[string]string{envCoreosNamespace: "ops"},
			args: []string{"--listen-addr=:1", "--metrics-bind-address=:2"}, wantErr: "give one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"POD_NAMESPACE", "POD_NAME", envCoreosNamespace, envCoreosPodName} {
				t.Setenv(k, tt.env[k])
			}
			o, _, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

// TestWatchNamespaceFromOLM: OLM tells an operator what to watch through
// $WATCH_NAMESPACE (the OperatorGroup's targets): one namespace, or "" for
// every namespace. Flags still win, and without it the pod's namespace is used.
func TestWatchNamespaceFromOLM(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "operators")
	t.Setenv(envCoreosNamespace, "")
	t.Setenv(envCoreosPodName, "")
	tests := []struct {
		name          string
		watch         *string
		args          []string
		wantNamespace string
		wantAll       bool
		wantErr       string
	}{
		{name: "not set: the pod's namespace", wantNamespace: "operators"},
		{name: "one target namespace", watch: ptr("team-a"), wantNamespace: "team-a"},
		{name: "all namespaces", watch: ptr(""), wantAll: true},
		{name: "several namespaces are refused", watch: ptr("team-a,team-b"), wantErr: "several namespaces"},
		{name: "--namespace wins", watch: ptr(""), args: []string{"--namespace=team-b"}, wantNamespace: "team-b"},
		{name: "--cluster-wide wins", watch: ptr("team-a"), args: []string{"--cluster-wide"}, wantAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.watch != nil {
				t.Setenv(envWatchNamespace, *tt.watch)
			} else {
				t.Setenv(envWatchNamespace, "")
				_ = os.Unsetenv(envWatchNamespace) // t.Setenv restores it afterwards
			}
			o, _, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.clusterWide != tt.wantAll || (!tt.wantAll && o.namespace != tt.wantNamespace) {
				t.Errorf("watching namespace %q, all %v; want %q, all %v", o.namespace, o.clusterWide, tt.wantNamespace, tt.wantAll)
			}
			if o.leaderElectionNamespace != "operators" {
				t.Errorf("leader election in %q, want the pod's namespace", o.leaderElectionNamespace)
			}
		})
	}
}

func ptr(s string) *string { return &s }
