# shellcheck shell=bash
# Every pinned version of the substrate lives here and nowhere else.
# Scripts source this file (scripts/lib/common.sh does it for every script).
# shellcheck disable=SC2034 # variables are read by the scripts that source this file

KIND_VERSION=v0.33.0

# Kubernetes: the current era. K8S_VERSION selects an entry of kind-configs/.
K8S_CURRENT=v1.34.4

# Online mode uses a node image published for KIND_VERSION (from its release
# notes). kind v0.33.0 ships no v1.34.4 image; its v1.34 line is v1.34.11.
KIND_NODE_IMAGE_ONLINE_v1_34=kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d

# Offline mode: every node component is built from the Go module proxy.
DEBIAN_SUITE=bookworm
CONTAINERD_VERSION=v2.1.5
CRICTL_VERSION=v1.34.0
CNI_PLUGINS_VERSION=v1.7.1
KUBE_ROUTER_VERSION=v2.1.0
COREDNS_VERSION=v1.12.1
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30
PAUSE_VERSION=3.10.1

# etcd used by kubeadm inside the node and by envtest's control plane.
ETCD_CONTROL_PLANE_VERSION=v3.6.5

# etcd releases built as workload images (upgrade chains need three minors).
ETCD_WORKLOAD_VERSIONS="v3.4.25 v3.5.21 v3.6.5"
# etcd 3.4 was released from module go.etcd.io/etcd, whose go.mod lacks /v3:
# the proxy serves its release commits only as pseudo-versions. This one is the
# v3.4.25 release commit (its version/version.go says 3.4.25).
ETCD_PSEUDO_VERSION_v3_4_25=v0.5.0-alpha.5.0.20230414071934-94593e63d45c
# Tags the workload busybox image answers to (operators' init containers use them).
BUSYBOX_WORKLOAD_TAGS="busybox:1.28.0-glibc busybox:latest"

# Third-party operators certified by the suite, built from the module proxy
# (scripts/build-thirdparty-images.sh; pins in scripts/thirdparty/).
COREOS_OPERATOR_VERSION=v0.9.4
