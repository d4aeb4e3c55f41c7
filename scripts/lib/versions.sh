# shellcheck shell=bash
# Every pinned version of the substrate lives here and nowhere else.
# Scripts source this file (scripts/lib/common.sh does it for every script).
# shellcheck disable=SC2034 # variables are read by the scripts that source this file

KIND_VERSION=v0.33.0

# Kubernetes: the current era. K8S_VERSION selects it or an older era below..
K8S_CURRENT=v1.34.4
# Older eras, for operators that must still run there. K8S_VERSION=1.16 means
# K8S_1_16 (scripts/lib/cluster.sh resolves it).
K8S_1_16=v1.16.15
# The last release that serves extensions/v1beta1 Deployments, which the
# book's manifests (coreos etcd-operator v0.9.4) use verbatim.
K8S_1_15=v1.15.12
# Releases before Go modules (pins in Godeps.json: scripts/godeps2gomod). 1.13
# is the oldest that runs here: kubeadm before 1.13 reads v1alpha2/v1alpha3
# configuration, which kind v0.33 does not write (docs/eras.md, "Below 1.13").
K8S_1_14=v1.14.10
K8S_1_13=v1.13.12
# The newest release the module proxy serves: what users certifying an
# operator today run. Its kubelet needs failCgroupV1: false on a cgroup v1
# host (conformance/cluster adds it from 1.35).
K8S_1_37=v1.37.2

# Online mode uses a node image published for KIND_VERSION (from its release
# notes). kind v0.33.0 ships no v1.34.4 image; its v1.34 line is v1.34.11.
KIND_NODE_IMAGE_ONLINE_v1_34=kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d
# kind v0.33.0 publishes no 1.16 image. The last one is kind v0.12.0's (release
# notes of github.com/kubernetes-sigs/kind v0.12.0, "Images pre-built"):
#   kindest/node:v1.16.15@sha256:64bac16b83b6adfd04ea3fbcf6c9b5b893277120f2b2cbf9f5fa3e5d4c2260cc
# It is made for kind v0.12.0's base and `kind create`, so online mode does not
# offer 1.16; offline mode builds its own 1.16 node (see node_pins below).

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

# etcd releases built as workload images: the newest patch of each minor whose
# server, etcdctl and etcdutl modules the proxy serves (for 3.5: v3.5.36;
# v3.5.22-v3.5.32 lack etcdctl and etcdutl there, v3.5.37+ is not served),
# plus v3.5.6, the last release whose upstream image had a shell. The 3.5
# patch is also the reference operator's default spec.version, and 3.6 may be
# reached from it: etcd's 3.5 to 3.6 upgrade guide asks for 3.5.32 or later.
ETCD_WORKLOAD_VERSIONS="v3.4.25 v3.5.6 v3.5.36 v3.6.16 v3.7.3"
# Where each release's upstream image recipe is read: MODULE@VERSION FILE.
# The images are built from that Dockerfile with only its FROM line pointing at
# a local base of the same shape (scripts/build-workload-images.sh). Where the
# release's own root module is not served, the nearest served patch of the same
# minor stands in; their Dockerfiles differ only in the base image's digest.
ETCD_DOCKERFILE_v3_4_25="go.etcd.io/etcd@v0.5.0-alpha.5.0.20230414071934-94593e63d45c Dockerfile-release"
ETCD_DOCKERFILE_v3_5_6="go.etcd.io/etcd/v3@v3.5.6 Dockerfile-release.amd64"
# The proxy serves the root module up to v3.5.33 only; its Dockerfile is
# v3.5.21's, word for word.
ETCD_DOCKERFILE_v3_5_36="go.etcd.io/etcd/v3@v3.5.33 Dockerfile-release.amd64"
ETCD_DOCKERFILE_v3_6_16="go.etcd.io/etcd/v3@v3.6.14 Dockerfile"
ETCD_DOCKERFILE_v3_7_3="go.etcd.io/etcd/v3@v3.7.1 Dockerfile"
# etcd 3.4 was released from module go.etcd.io/etcd, whose go.mod lacks /v3:
# the proxy serves its release commits only as pseudo-versions. This one is the
# v3.4.25 release commit (its version/version.go says 3.4.25).
ETCD_PSEUDO_VERSION_v3_4_25=v0.5.0-alpha.5.0.20230414071934-94593e63d45c
# Tags the workload busybox image answers to (operators' init containers use them).
BUSYBOX_WORKLOAD_TAGS="busybox:1.28.0-glibc busybox:latest"

# Third-party operators certified by the suite, built from the module proxy
# (scripts/build-thirdparty-images.sh; pins in scripts/thirdparty/).
COREOS_OPERATOR_VERSION=v0.9.4

# S3-compatible object store of the backup and restore tests (integration
# tests and the kind e2e), built from the module proxy by build-seaweedfs.sh.
# SeaweedFS: Apache-2.0, a real S3 API (SigV4 auth, multipart uploads) in one
# static Go binary. MinIO's server is AGPL and the proxy does not serve it.
# The proxy serves this pseudo-version only (it refuses version lists).
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
# Our name, not upstream's: `weed version` of that commit says 4.53.
SEAWEEDFS_IMAGE=etcdproof/seaweedfs:4.53-7506e5f91cd6

# Operator Lifecycle Manager v0, built from the module proxy by
# scripts/build-olm.sh (make olm) with the images its release names.
OLM_VERSION=v0.46.0
# opm (github.com/operator-framework/operator-registry) serves file-based
# catalogs. OLM v0.46.0's own release pairs it with v1.73.0 (its go.mod's
# operator-registry, which its release writes into --opmImage); v1.74.0 is
# newer and serves the same catalog API.
OPM_VERSION=v1.74.0
# helm renders OLM's release manifests from its chart, as OLM's `make release`
# does: the version OLM pins in .bingo/helm.mod at v0.46.0.
OLM_HELM_VERSION=v3.18.3

# The registry mirror every cluster's nodes pull docker.io images from first
# (scripts/lib/mirror.sh): the CNCF Distribution registry, the "registry"
# image people run as a pull-through or air-gapped mirror, built from the
# module proxy under our name (its upstream image is Alpine-based).
REGISTRY_VERSION=v3.0.0
REGISTRY_IMAGE=etcdproof/registry:$REGISTRY_VERSION
# Images operators start with imagePullPolicy Always (or untagged, which
# means Always): only a registry can serve them offline, so they are pushed
# to the mirror as well as loaded into the nodes.
# tutum/curl: coreos v0.9.4's restore seeds each member with it.
MIRRORED_IMAGES="tutum/curl:latest"

# node_pins VERSION: override the node-side pins above for a Kubernetes release
# of another era than the current one; the default pins stay for every other
# release.
# Scripts that build or run a node export ETCDPROOF_NODE_K8S=VERSION, so the
# scripts they call (build-tools.sh, build-base-image.sh) pick the same pins.
node_pins() {
  case $1 in
    v1.13.* | v1.14.* | v1.15.* | v1.16.*)
      # kubelet 1.16 speaks CRI v1alpha2 only: containerd 2.x dropped it, 1.6
      # (the last line with it) still serves it and reads kind's version = 2 config.
      CONTAINERD_VERSION=v1.6.38
      # kube-router 2.x waits for discovery.k8s.io/v1 EndpointSlices (1.21+)
      # before it routes anything; 1.6 watches Endpoints and builds from the proxy.
      KUBE_ROUTER_VERSION=v1.6.1
      # What kubeadm 1.16 deploys (`kubeadm config images list`): coredns 1.6.2,
      # pause 3.1 (our pause program under that name), etcd 3.3.15-0.
      COREDNS_VERSION=v1.6.2
      # kubeadm 1.15 lists coredns 1.3.1 (and etcd 3.3.10-0, pause 3.1), which
      # predates Go modules and its dependencies are not all served: its nodes
      # hold coredns 1.6.2 under its own name, and the cluster's kubeadm
      # configuration asks for that tag (etcdproof cluster --dns-image-tag).
      # kubeadm 1.15's etcd liveness probe names https://[127.0.0.1]:2379,
      # which etcdctl 3.3 read and 3.4+ refuses ("too many colons in
      # address"): the kubelet would kill the control plane's etcd every 95 s.
      # Its node's etcdctl drops the brackets of an IPv4 endpoint first.
      # kubeadm 1.13 and 1.14 name the same probe, and CoreDNS 1.2.6 and 1.3.1.
      if [[ $1 == v1.13.* || $1 == v1.14.* || $1 == v1.15.* ]]; then
        KUBEADM_DNS_IMAGE_TAG=1.6.2
        NODE_ETCDCTL_UNBRACKET_IPV4=1
      fi
      # etcd 3.3 predates Go modules (imports github.com/coreos/etcd, unpinned
      # dependencies); the etcd image kubeadm names 3.3.15-0 holds this build.
      # etcd 3.4 serves the same v3 API to a 1.16 API server.
      NODE_ETCD_VERSION=v3.4.25
      ;;
    v1.37.*)
      # What kubeadm 1.37 deploys (`kubeadm config images list`): coredns
      # v1.14.6, etcd 3.7.0-0 (built as kubeadm names it), pause 3.10.2 (our
      # pause program under that name).
      COREDNS_VERSION=v1.14.6
      ;;
  esac
}
# etcd built into the node image when kubeadm's own choice cannot be built ("" = kubeadm's).
NODE_ETCD_VERSION=
# CoreDNS image tag kubeadm is told to deploy when its own choice cannot be built ("" = kubeadm's).
KUBEADM_DNS_IMAGE_TAG=
# 1: the node's etcd image runs etcdctl behind a shim that drops the brackets
# of IPv4 endpoints ("" = etcdctl as built).
NODE_ETCDCTL_UNBRACKET_IPV4=
if [[ -n "${ETCDPROOF_NODE_K8S:-}" ]]; then node_pins "$ETCDPROOF_NODE_K8S"; fi
