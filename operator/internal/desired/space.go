package desired

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// EtcdDefaultQuotaBackendBytes is what etcd itself uses without
// --quota-backend-bytes (or with 0): 2 GiB, in every release 3.4 to 3.7.
const EtcdDefaultQuotaBackendBytes int64 = 2 << 30

// DefaultQuotaBackendBytes is the quota members get. It is etcd's own
// default, written out: members made before it (which ran without the
// flag) and after it have the same limit, so an operator upgrade changes no
// running cluster's limit, and the operator judges sizes against a number
// it knows on releases whose status does not report the quota (before 3.6).
// A larger quota needs as much room on the volume and in memory (etcd maps
// the whole file), which the operator cannot know.
const DefaultQuotaBackendBytes = EtcdDefaultQuotaBackendBytes

// DefaultAutoCompactionMode and DefaultAutoCompactionRetention: etcd keeps
// every revision unless something compacts, so a cluster whose clients do
// not compact (all but kube-apiserver's) fills its quota with history and
// stops taking writes (NOSPACE). Periodic, 5 minutes: the leader compacts
// every 5 minutes to the revision it had 5 minutes earlier, so a watcher
// that reconnects within 5 minutes resumes where it stopped. That is the
// window kube-apiserver gives its own watchers (it compacts every 5
// minutes, --etcd-compaction-interval), so under kube-apiserver this
// compacts nothing it would have kept. A revision-based retention would
// shrink that window under a burst of writes, when watchers need it most.
const (
	DefaultAutoCompactionMode      = "periodic"
	DefaultAutoCompactionRetention = "5m"
)

// The environment variables etcd reads for the same settings. etcd takes a
// variable only for a flag not given on its command line, so the operator
// leaves out each flag whose variable the user sets in spec.pod.etcdEnv.
const (
	EnvQuotaBackendBytes       = "ETCD_QUOTA_BACKEND_BYTES"
	EnvAutoCompactionMode      = "ETCD_AUTO_COMPACTION_MODE"
	EnvAutoCompactionRetention = "ETCD_AUTO_COMPACTION_RETENTION"
)

const quotaFlag = "--quota-backend-bytes="

// spaceFlags are the quota and auto-compaction defaults not set in
// spec.pod.etcdEnv. The two compaction settings go together: a retention
// means a duration in periodic mode and a count in revision mode, so a
// mode or a retention of the user's is never paired with a default of ours.
func spaceFlags(c *etcdv1beta2.EtcdCluster) []string {
	var env []corev1.EnvVar
	if c.Spec.Pod != nil {
		env = c.Spec.Pod.EtcdEnv
	}
	var flags []string
	if !setsEnv(env, EnvQuotaBackendBytes) {
		flags = append(flags, quotaFlag+strconv.FormatInt(DefaultQuotaBackendBytes, 10))
	}
	if !setsEnv(env, EnvAutoCompactionMode) && !setsEnv(env, EnvAutoCompactionRetention) {
		flags = append(flags, "--auto-compaction-mode="+DefaultAutoCompactionMode,
			"--auto-compaction-retention="+DefaultAutoCompactionRetention)
	}
	return flags
}

// setsEnv: a variable counts as set whatever its value or source (a
// ConfigMap, say): etcd reads it, and a flag would shadow it.
func setsEnv(env []corev1.EnvVar, name string) bool {
	return slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == name })
}

// QuotaOf is the backend quota a member pod's etcd runs with: its
// --quota-backend-bytes, else its ETCD_QUOTA_BACKEND_BYTES, else etcd's
// default (pods of an older operator had neither); 0 when it cannot be told
// (the variable comes from a ConfigMap or Secret, or does not parse).
func QuotaOf(p *corev1.Pod) int64 {
	for _, ctr := range p.Spec.Containers {
		if ctr.Name != ContainerName {
			continue
		}
		for _, arg := range ctr.Command {
			if v, ok := strings.CutPrefix(arg, quotaFlag); ok {
				return quotaValue(v)
			}
		}
		for _, e := range ctr.Env {
			if e.Name != EnvQuotaBackendBytes {
				continue
			}
			if e.ValueFrom != nil {
				return 0
			}
			return quotaValue(e.Value)
		}
	}
	return EtcdDefaultQuotaBackendBytes
}

func quotaValue(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil || n < 0:
		return 0
	case n == 0:
		return EtcdDefaultQuotaBackendBytes // etcd reads 0 as its default
	}
	return n
}
