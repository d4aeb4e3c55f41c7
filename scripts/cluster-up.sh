#!/usr/bin/env bash
# From a bare Debian host to a Ready kind cluster; reuses a cluster that exists.
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

WAIT_TIMEOUT=${ETCDPROOF_WAIT_TIMEOUT:-5m}
start=$SECONDS
version=$(k8s_version)
config=$(kind_config "$version")
# Node-side pins (containerd, kube-router, ...) follow the release; see versions.sh node_pins.
export ETCDPROOF_NODE_K8S=$version
node_pins "$version"

"$ETCDPROOF_ROOT/scripts/host-setup.sh"
mode=$(substrate_mode)
if [[ $mode == online ]] && ! online_node_image "$version" >/dev/null 2>&1; then
  log "kind $KIND_VERSION publishes no node image for Kubernetes $version: building it here (offline mode)"
  mode=offline
fi
log "mode: $mode (set ETCDPROOF_OFFLINE=1/0 to choose); Kubernetes $version; cluster $CLUSTER_NAME"

# Stable tool paths for the suite: $ETCDPROOF_CACHE/bin/{kind,kubectl}.
link_tools() {
  local kind_dir k8s_bin
  kind_dir=$("$ETCDPROOF_ROOT/scripts/build-tools.sh" kind)
  k8s_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$K8S_CURRENT" kubectl)
  mkdir -p "$(dirname "$KIND")"
  ln -sfn "$kind_dir/kind" "$KIND"
  ln -sfn "$k8s_bin/kubectl" "$KUBECTL"
}
link_tools

if [[ $mode == offline ]]; then
  node_image=$("$ETCDPROOF_ROOT/scripts/build-node-image.sh" "$version")
else
  node_image=$(online_node_image "$version")
fi

render_config() {
  local disable_cni=false
  [[ $mode == offline ]] && disable_cni=true
  sed -e "s#@DISABLE_DEFAULT_CNI@#$disable_cni#" \
    -e "s#@AUDIT_POLICY@#$ETCDPROOF_ROOT/kind-configs/audit-policy.yaml#" \
    -e "s#@AUDIT_DIR@#$AUDIT_DIR#" "$config" >"$CLUSTER_DIR/kind-config.yaml"
}

create_cluster() {
  # A new cluster starts a new audit log.
  rm -rf "$AUDIT_DIR"
  mkdir -p "$AUDIT_DIR"
  render_config
  # No --wait: offline nodes turn Ready only once kube-router is installed below.
  "$KIND" create cluster --name "$CLUSTER_NAME" --image "$node_image" --config "$CLUSTER_DIR/kind-config.yaml"
}

install_cni() {
  sed "s#@KUBE_ROUTER_IMAGE@#etcdproof/kube-router:$KUBE_ROUTER_VERSION#" "$ETCDPROOF_ROOT/kind-configs/kube-router.yaml" |
    kube apply -f -
}

# local-path-provisioner's helper pods ask for system-node-critical, which
# Kubernetes before 1.17 admits only in kube-system: drop it there.
fix_storage_priority() {
  kube -n local-path-storage get configmap local-path-config -o json |
    jq '.data["helperPod.yaml"] |= sub("\n  priorityClassName: system-node-critical"; "")' | kube replace -f -
}

kube() { "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" "$@"; }

wait_ready() {
  kube wait --for=condition=Ready nodes --all --timeout="$WAIT_TIMEOUT"
  kube -n kube-system rollout status daemonset/kube-proxy --timeout="$WAIT_TIMEOUT"
  if [[ $mode == offline ]]; then kube -n kube-system rollout status daemonset/kube-router --timeout="$WAIT_TIMEOUT"; fi
  kube -n kube-system rollout status deployment/coredns --timeout="$WAIT_TIMEOUT"
  kube -n local-path-storage rollout status deployment/local-path-provisioner --timeout="$WAIT_TIMEOUT"
}

# A cluster left behind by a stopped Docker daemon (a reboot, an ended CI job)
# still shows in `kind get clusters` but never answers: recreate it.
cluster_answers() {
  local kubeconfig
  kubeconfig=$(mktemp)
  "$KIND" get kubeconfig --name "$CLUSTER_NAME" >"$kubeconfig" 2>/dev/null &&
    "$KUBECTL" --kubeconfig "$kubeconfig" --request-timeout=10s get --raw /readyz >/dev/null 2>&1
  local rc=$?
  rm -f "$kubeconfig"
  return $rc
}

mkdir -p "$CLUSTER_DIR"
if cluster_exists && ! cluster_answers; then
  log "== cluster $CLUSTER_NAME exists but its API server does not answer: deleting it"
  "$KIND" delete cluster --name "$CLUSTER_NAME" >&2
fi
if cluster_exists; then
  log "== cluster $CLUSTER_NAME exists: reusing it (make cluster-down to start over)"
else
  step "cluster-create-$CLUSTER_NAME" "" create_cluster
fi
"$KIND" get kubeconfig --name "$CLUSTER_NAME" >"$CLUSTER_KUBECONFIG.tmp"
mv "$CLUSTER_KUBECONFIG.tmp" "$CLUSTER_KUBECONFIG"
# kind also merged the context into the default kubeconfig; keep it current there too.
"$KIND" export kubeconfig --name "$CLUSTER_NAME" >/dev/null 2>&1 || true
if [[ $mode == offline ]]; then step "cluster-cni-$CLUSTER_NAME" "" install_cni; fi
minor=${version#v1.}
if ((${minor%%.*} < 17)); then step "cluster-storage-$CLUSTER_NAME" "" fix_storage_priority; fi
step "cluster-ready-$CLUSTER_NAME" "" wait_ready

log "cluster $CLUSTER_NAME Ready after $((SECONDS - start))s ($mode, node image $node_image)"
kube get nodes -o wide >&2
cat >&2 <<INFO
  context:     $KUBE_CONTEXT
  kubeconfig:  $CLUSTER_KUBECONFIG
  audit log:   $AUDIT_LOG
  kind:        $KIND
  kubectl:     $KUBECTL
  (eval "\$(scripts/cluster-env.sh)" exports these)
INFO
echo "$KUBE_CONTEXT"
