# shellcheck shell=bash
# Every pinned version of the substrate lives here and nowhere else.
# Scripts source this file; the Makefile reads it through `scripts/print-version.sh`.

KIND_VERSION=v0.33.0

# Kubernetes: the current era. K8S_VERSION selects an entry of kind-configs/.
K8S_CURRENT=v1.34.4

CONTAINERD_VERSION=v2.1.5
CRICTL_VERSION=v1.34.0
CNI_PLUGINS_VERSION=v1.7.1
KUBE_ROUTER_VERSION=v2.1.0
COREDNS_VERSION=v1.12.1
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30

# etcd used by kubeadm inside the node and by envtest's control plane.
ETCD_CONTROL_PLANE_VERSION=v3.6.5

# etcd releases built as workload images (upgrade chains need three minors).
ETCD_WORKLOAD_VERSIONS="v3.4.37 v3.5.21 v3.6.5"
