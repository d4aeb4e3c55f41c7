package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// kubeletOnCgroupV2From is the first release whose kubelet runs on a
// cgroup v2 host (kind's known issue "Failure to Create Cluster with
// Cgroups v2"); older eras need a cgroup v1 host (docs/eras.md).
var kubeletOnCgroupV2From = version.MustParseGeneric("v1.19.0")

// Preflight says why this host cannot make a cluster of s's Kubernetes
// release, before a node image is built or a node started: a release
// older than kind's kubeadm configuration reaches, or a kubelet that does
// not run on this Docker's cgroup version.
func (s Spec) Preflight(ctx context.Context) error {
	return preflight(s, func() string { return hostCgroupVersion(ctx) })
}

// preflight is Preflight with the host's cgroup version ("1", "2", or ""
// when unknown) asked of hostCgroup, only for releases it matters to.
func preflight(s Spec, hostCgroup func() string) error {
	v, err := s.version()
	if err != nil {
		return err
	}
	if err := kindWritesKubeadmFor(v); err != nil {
		return err
	}
	if v.LessThan(kubeletOnCgroupV2From) && hostCgroup() == "2" {
		return fmt.Errorf("Kubernetes v%s needs a cgroup v1 host: kubelets before %d.%d do not run on cgroup v2, which this Docker uses (docker info: CgroupVersion 2). Run this era on a cgroup v1 host (docs/eras.md, \"cgroup v1\")",
			v, kubeletOnCgroupV2From.Major(), kubeletOnCgroupV2From.Minor())
	}
	return nil
}

// kindWritesKubeadmFor refuses a release whose kubeadm reads only
// configuration older than any kind writes.
func kindWritesKubeadmFor(v *version.Version) error {
	if v.LessThan(kubeadmV1Beta1From) {
		return fmt.Errorf("Kubernetes v%s: its kubeadm reads configuration older than kubeadm.k8s.io/v1beta1, which kind does not write; v%s is the oldest release this suite can make a cluster of (docs/eras.md, \"Below 1.13\")", v, kubeadmV1Beta1From)
	}
	return nil
}

// hostCgroupVersion is the cgroup version Docker runs containers on, ""
// when Docker does not say (kind then reports what fails).
func hostCgroupVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.CgroupVersion}}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
