package desired

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"
)

// MetricsPort is where every member serves --listen-metrics-urls: plain
// HTTP with /health (all releases), /livez and /readyz (where they exist)
// and /metrics. The probes use it rather than the client port because the
// client port turns HTTPS, with client certificates, once client TLS is
// configured: the kubelet can skip verifying a server certificate but cannot
// present one of its own, whereas this listener stays plain HTTP (etcd only
// uses TLS on it for https:// URLs). 3.4 already has the flag.
const MetricsPort = 2381

// The HTTP paths the probes use, all served on MetricsPort. What each one
// checks was read in etcdserver/api/etcdhttp of each release.
const (
	// PathHealth checks alarms, that a leader is known, and a linearizable
	// read (3.4: a quorum read through raft). It has no learner check, so a
	// caught-up learner passes. Served by every release.
	PathHealth = "/health"
	// PathHealthNoSpace is PathHealth but for the NOSPACE alarm (the
	// exclude parameter, 3.5.0+), as kubeadm probes etcd: every member
	// lists every alarm, so on plain /health one full member made every
	// member fail its probes at once, and the kubelet restarted them all,
	// while under NOSPACE a member still serves reads, deletes and the
	// compaction that recovers it.
	PathHealthNoSpace = "/health?exclude=NOSPACE"
	// PathHealthSerializable skips the leader check and reads locally
	// (3.5.3+, etcd-io/etcd#13706; older releases ignore the parameter),
	// NOSPACE excluded as in PathHealthNoSpace.
	PathHealthSerializable = "/health?exclude=NOSPACE&serializable=true"
	// PathLivez is a local serializable read (3.5.11+, 3.6+).
	PathLivez = "/livez"
	// PathReadyz checks the corruption alarm, a serializable and a
	// linearizable read (3.5.11+, 3.6+; 3.4.29+ too, but 3.4 keeps /health
	// here); from 3.5.19 and in 3.6+ it also fails on every learner
	// (non_learner).
	PathReadyz = "/readyz"
	// PathMetrics answers while the process serves HTTP; it checks nothing
	// of etcd's. Only 3.4 members are probed on it (see HealthPathsFor).
	PathMetrics = "/metrics"
)

// HealthPaths are the probe paths for one etcd release.
type HealthPaths struct {
	// Alive answers while the process serves local reads. From 3.5.3 on it
	// needs neither a leader nor a quorum, so a member that lags or is cut
	// off is not restarted for that. Startup and liveness probes use it.
	Alive string
	// Ready answers once the member serves linearizable reads: it knows a
	// leader and its read index is confirmed and applied. From 3.5.19 and in
	// 3.6+ it also fails on a learner, so clients are not sent to one; the
	// PodDisruptionBudget does not rely on that and counts voters' pods
	// only (see DisruptionBudget, and the drain check's finding). The operator
	// promotes learners on etcd's own status, not on pod readiness, and the
	// peer Service publishes not-ready addresses, so learners still catch up.
	Ready string
}

// healthPathsSince is newest first: the first entry whose release the
// member runs (or a later one) gives its paths.
var healthPathsSince = []struct {
	since *version.Version
	paths HealthPaths
}{
	{version.MustParseGeneric("3.5.11"), HealthPaths{Alive: PathLivez, Ready: PathReadyz}},
	{version.MustParseGeneric("3.5.3"), HealthPaths{Alive: PathHealthSerializable, Ready: PathHealthNoSpace}},
	{version.MustParseGeneric("3.5.0"), HealthPaths{Alive: PathHealthNoSpace, Ready: PathHealthNoSpace}},
}

// HealthPathsFor chooses the probe paths for an etcd release.
//
// 3.4's /health is a v2 quorum read (QGET) proposed through raft, so every
// probe writes a v2 entry to the WAL. etcd 3.6 refuses to replay such
// entries ("detected disallowed v2 WAL for stage --v2-deprecation=write-only")
// and the first 3.6 member of a cluster upgraded from 3.4 through 3.5 would
// crash until a snapshot had covered them (3.5 snapshots every 100,000
// entries). So 3.4 members are probed on /metrics, which only says the
// process serves: their membership steps rest on the operator's own status
// calls, which checked every member's health before any change anyway.
// 3.5.0-3.5.2 get /health (a v3 read there) for both probes; an unparsable
// version too, since every release from 3.5 on serves it.
func HealthPathsFor(etcdVersion string) HealthPaths {
	v, err := version.ParseGeneric(etcdVersion)
	if err == nil {
		for _, s := range healthPathsSince {
			if v.AtLeast(s.since) {
				return s.paths
			}
		}
		return HealthPaths{Alive: PathMetrics, Ready: PathMetrics}
	}
	return HealthPaths{Alive: PathHealth, Ready: PathHealth}
}

func httpProbe(path string) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path:   path,
		Port:   intstr.FromInt32(MetricsPort),
		Scheme: corev1.URISchemeHTTP,
	}}
}

// memberProbes are the startup, liveness and readiness probes of a member
// running etcdVersion. None needs a shell: etcd images are distroless from
// 3.4.23 and 3.5.7 on.
func memberProbes(etcdVersion string) (startup, liveness, readiness *corev1.Probe) {
	paths := HealthPathsFor(etcdVersion)
	// Until it passes, liveness and readiness wait: up to 5 minutes for a
	// member to start, find its peers and (on /health) a leader.
	startup = &corev1.Probe{
		ProbeHandler:     httpProbe(paths.Alive),
		PeriodSeconds:    2,
		TimeoutSeconds:   5,
		FailureThreshold: 150,
	}
	// Restart only a member that has stopped answering for over a minute and
	// a half: a defragmentation blocks reads for a while, and on /health
	// (3.4, 3.5.0-3.5.2) so does a lost leader. A restarted container keeps
	// its data volume. The initial delay stands in for the startup probe on
	// Kubernetes before 1.18, whose API servers drop it.
	liveness = &corev1.Probe{
		ProbeHandler:        httpProbe(paths.Alive),
		InitialDelaySeconds: 15,
		PeriodSeconds:       10,
		TimeoutSeconds:      15,
		FailureThreshold:    8,
	}
	readiness = &corev1.Probe{
		ProbeHandler:     httpProbe(paths.Ready),
		PeriodSeconds:    2,
		TimeoutSeconds:   5,
		FailureThreshold: 3,
	}
	return startup, liveness, readiness
}

// Unsafe switches on deliberately wrong member objects, for the conformance
// suite's self-test only.
type Unsafe struct {
	// ShellProbe gives members the readiness probe of earlier releases of
	// this operator, an exec of /bin/sh running etcdctl. Images without a
	// shell (etcd 3.4.23+, 3.5.7+) never get ready with it.
	ShellProbe bool
	// LeavePVCOnDelete creates one claim of every cluster (see LeavesClaim)
	// without an owner reference, so it outlives the deleted cluster.
	LeavePVCOnDelete bool
}

// LeavesClaim reports whether m's claim is the one LeavePVCOnDelete leaves
// behind: that of the bootstrap member whose name sorts first.
func (u Unsafe) LeavesClaim(m Member) bool {
	if !u.LeavePVCOnDelete || !m.NewCluster || len(m.InitialCluster) == 0 {
		return false
	}
	names := make([]string, 0, len(m.InitialCluster))
	for name := range m.InitialCluster {
		names = append(names, name)
	}
	return slices.Min(names) == m.Name
}

// shellReadinessProbe is the exec probe ShellProbe brings back.
func shellReadinessProbe() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			"/bin/sh", "-ec",
			fmt.Sprintf("ETCDCTL_API=3 etcdctl --endpoints=http://127.0.0.1:%d --command-timeout=3s endpoint status", ClientPort),
		}}},
		PeriodSeconds:    2,
		TimeoutSeconds:   5,
		FailureThreshold: 3,
	}
}
