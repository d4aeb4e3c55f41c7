package desired

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// shells are programs that would need a shell in the image.
var shells = []string{"sh", "bash", "ash", "dash", "busybox"}

func runsShell(command []string) bool {
	return len(command) > 0 && slices.Contains(shells, path.Base(command[0]))
}

// TestMemberPodNeedsNoShell: etcd images are distroless from 3.4.23 and
// 3.5.7 on, so nothing in a member pod may exec a shell, and every probe is
// an HTTP GET on the metrics listener with the paths that release serves.
func TestMemberPodNeedsNoShell(t *testing.T) {
	tests := []struct {
		version      string
		alive, ready string
	}{
		// 3.4's /health writes v2 entries that 3.6 refuses to replay.
		{"3.4.25", "/metrics", "/metrics"},
		// NOSPACE, which every member lists, must not fail every probe at once.
		{"3.5.0", "/health?exclude=NOSPACE", "/health?exclude=NOSPACE"},
		{"3.5.2", "/health?exclude=NOSPACE", "/health?exclude=NOSPACE"},
		{"3.5.3", "/health?exclude=NOSPACE&serializable=true", "/health?exclude=NOSPACE"},
		{"3.5.6", "/health?exclude=NOSPACE&serializable=true", "/health?exclude=NOSPACE"},
		{"3.5.10", "/health?exclude=NOSPACE&serializable=true", "/health?exclude=NOSPACE"},
		{"3.5.11", "/livez", "/readyz"},
		{"3.5.18", "/livez", "/readyz"},
		{"3.5.19", "/livez", "/readyz"},
		{"3.5.21", "/livez", "/readyz"},
		{"3.6.0-rc.1", "/livez", "/readyz"},
		{"3.6.16", "/livez", "/readyz"},
		{"3.7.3", "/livez", "/readyz"},
		{"not-a-version", "/health", "/health"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			m := Member{Name: "example-a", Version: tt.version, NewCluster: true, Token: "uid-1",
				InitialCluster: map[string]string{"example-a": PeerURL(sample(), "example-a")}}
			p := MemberPod(sample(), m, Unsafe{})
			for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
				if runsShell(c.Command) || runsShell(c.Args) {
					t.Errorf("container %s runs a shell: %q %q", c.Name, c.Command, c.Args)
				}
				if c.Lifecycle != nil {
					t.Errorf("container %s has lifecycle hooks %+v", c.Name, c.Lifecycle)
				}
			}
			c := p.Spec.Containers[0]
			if !slices.Contains(c.Command, fmt.Sprintf("--listen-metrics-urls=http://0.0.0.0:%d", MetricsPort)) {
				t.Errorf("command %q does not serve the probes' listener", c.Command)
			}
			for name, probe := range map[string]struct {
				p    *corev1.Probe
				path string
			}{
				"startup":   {c.StartupProbe, tt.alive},
				"liveness":  {c.LivenessProbe, tt.alive},
				"readiness": {c.ReadinessProbe, tt.ready},
			} {
				if probe.p == nil {
					t.Errorf("no %s probe", name)
					continue
				}
				get := probe.p.HTTPGet
				if probe.p.Exec != nil || get == nil || get.Scheme != corev1.URISchemeHTTP || get.Port.IntValue() != MetricsPort || get.Host != "" {
					t.Errorf("%s probe %+v: want an HTTP GET on port %d of the pod", name, probe.p.ProbeHandler, MetricsPort)
					continue
				}
				if get.Path != probe.path {
					t.Errorf("%s probe path %q, want %q", name, get.Path, probe.path)
				}
			}
		})
	}
}

// TestLivenessIsLenient: a member that lags, defragments or is cut off for
// a short while must not be restarted; readiness reacts within seconds.
func TestLivenessIsLenient(t *testing.T) {
	for _, v := range []string{"3.4.25", "3.5.21", "3.6.16"} {
		startup, liveness, readiness := memberProbes(v)
		if tolerated := liveness.PeriodSeconds * liveness.FailureThreshold; tolerated < 60 {
			t.Errorf("%s: liveness restarts a member after %d s without an answer", v, tolerated)
		}
		if liveness.TimeoutSeconds < 10 {
			t.Errorf("%s: liveness timeout %d s", v, liveness.TimeoutSeconds)
		}
		if startup.PeriodSeconds*startup.FailureThreshold < 120 {
			t.Errorf("%s: startup allows only %d s", v, startup.PeriodSeconds*startup.FailureThreshold)
		}
		if readiness.PeriodSeconds*readiness.FailureThreshold > 10 {
			t.Errorf("%s: readiness takes %d s to notice a member that stopped serving", v, readiness.PeriodSeconds*readiness.FailureThreshold)
		}
	}
}

func TestUnsafeShellProbe(t *testing.T) {
	m := Member{Name: "example-a", Version: "3.6.16"}
	c := MemberPod(sample(), m, Unsafe{ShellProbe: true}).Spec.Containers[0]
	if exec := c.ReadinessProbe.Exec; exec == nil || !runsShell(exec.Command) || !strings.Contains(strings.Join(exec.Command, " "), "etcdctl") {
		t.Fatalf("readiness probe %+v: want the old exec of /bin/sh running etcdctl", c.ReadinessProbe)
	}
	if c.LivenessProbe.HTTPGet == nil || c.StartupProbe.HTTPGet == nil {
		t.Errorf("only readiness changes: startup %+v liveness %+v", c.StartupProbe, c.LivenessProbe)
	}
}

func TestUnsafeLeavesOneClaim(t *testing.T) {
	initial := map[string]string{"example-b": "u", "example-a": "u", "example-c": "u"}
	tests := []struct {
		name string
		u    Unsafe
		m    Member
		want bool
	}{
		{"safe mode leaves none", Unsafe{}, Member{Name: "example-a", NewCluster: true, InitialCluster: initial}, false},
		{"first bootstrap member by name", Unsafe{LeavePVCOnDelete: true}, Member{Name: "example-a", NewCluster: true, InitialCluster: initial}, true},
		{"other bootstrap member", Unsafe{LeavePVCOnDelete: true}, Member{Name: "example-b", NewCluster: true, InitialCluster: initial}, false},
		{"member that joins later", Unsafe{LeavePVCOnDelete: true}, Member{Name: "example-a", InitialCluster: initial}, false},
	}
	for _, tt := range tests {
		if got := tt.u.LeavesClaim(tt.m); got != tt.want {
			t.Errorf("%s: LeavesClaim %v, want %v", tt.name, got, tt.want)
		}
	}
}
