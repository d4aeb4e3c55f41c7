#!/usr/bin/env bash
# From a bare Debian host to a Ready kind cluster; reuses a cluster that exists.
# The images are built here (bash); the cluster is made by `etcdproof cluster up`
# (conformance/cluster, on kind's Go API).
# usage: cluster-up.sh
# env:   K8S_VERSION (current; or 1.16 / v1.16.15)  KIND_TOPOLOGY ("" or 3workers)
#        ETCDPROOF_CLUSTER (etcdproof for the current release, else e.g. etcdproof-v1-16)
#        ETCDPROOF_OFFLINE (probe; 1 = build every image here, 0 = pull kind's node image)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"
# shellcheck source=scripts/lib/mirror.sh
source "$ETCDPROOF_ROOT/scripts/lib/mirror.sh"

start=$SECONDS
version=$(k8s_version)
# Node-side pins (containerd, kube-router, ...) follow the release; see versions.sh node_pins.
export ETCDPROOF_NODE_K8S=$version
node_pins "$version"

"$ETCDPROOF_ROOT/scripts/host-setup.sh"
# A release this host cannot run (older than kind reaches; before 1.19 on a
# cgroup v2 host) is refused by etcdproof's preflight, the one `cluster up`
# runs again, before a node image is built for 20 min.
etcdproof_cli cluster up --preflight-only --name "$CLUSTER_NAME" --kubernetes-version "$version" ||
  die "Kubernetes $version cannot run on this host (see above)"
mode=$(substrate_mode)
if [[ $mode == online ]] && ! online_node_image "$version" >/dev/null 2>&1; then
  log "kind $KIND_VERSION publishes no node image for Kubernetes $version: building it here (offline mode)"
  mode=offline
fi
log "mode: $mode (set ETCDPROOF_OFFLINE=1/0 to choose); Kubernetes $version; cluster $CLUSTER_NAME"

# A stable kubectl path for the suite and for people: $ETCDPROOF_CACHE/bin/kubectl.
# kind itself is not installed: bin/etcdproof drives clusters through kind's Go API.
link_kubectl() {
  local k8s_bin
  k8s_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$K8S_CURRENT" kubectl)
  mkdir -p "$(dirname "$KUBECTL")"
  ln -sfn "$k8s_bin/kubectl" "$KUBECTL"
}
link_kubectl

cluster_flags=(--name "$CLUSTER_NAME" --cluster-dir "$CLUSTER_DIR" --workers "$(kind_workers)"
  --registry-mirror "$REGISTRY_MIRROR_ADDRESS")
if [[ $mode == offline ]]; then
  node_image=$("$ETCDPROOF_ROOT/scripts/build-node-image.sh" "$version")
  # Offline node images have no kindnetd: kube-router is the pod network.
  cluster_flags+=(--kube-router-image "etcdproof/kube-router:$KUBE_ROUTER_VERSION")
  if [[ -n "$KUBEADM_DNS_IMAGE_TAG" ]]; then cluster_flags+=(--dns-image-tag "$KUBEADM_DNS_IMAGE_TAG"); fi
else
  node_image=$(online_node_image "$version")
fi
cluster_flags+=(--node-image "$node_image" --kubernetes-version "$version")

# Creates the cluster, or reuses it when its API server answers (one left
# behind by a stopped Docker daemon is made again), installs the pod network,
# and waits for nodes, kube-proxy, CoreDNS and local-path storage.
step "cluster-up-$CLUSTER_NAME" "" etcdproof_cli cluster up "${cluster_flags[@]}"
# After the cluster: its Docker network is where the mirror runs.
step registry-mirror "" ensure_mirror

log "cluster $CLUSTER_NAME Ready after $((SECONDS - start))s ($mode, node image $node_image)"
kube() { "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" "$@"; }
kube get nodes -o wide >&2
cat >&2 <<INFO
  context:     $KUBE_CONTEXT
  kubeconfig:  $CLUSTER_KUBECONFIG
  audit log:   $AUDIT_LOG
  kubectl:     $KUBECTL
  (eval "\$(scripts/cluster-env.sh)" exports these)
INFO
echo "$KUBE_CONTEXT"
