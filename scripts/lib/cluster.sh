# shellcheck shell=bash
# Where a cluster's files live and how its mode and version are chosen.
# Every value can be printed for other tools by scripts/cluster-env.sh.
# shellcheck disable=SC2034 # variables are read by the scripts that source this file

# k8s_version: K8S_VERSION (default "current") as a release, e.g. v1.34.4.
# A minor alone (1.16 or v1.16) means the release versions.sh pins for it (K8S_1_16).
k8s_version() {
  local v=${K8S_VERSION:-current} var
  [[ "$v" == current ]] && v=$K8S_CURRENT
  if [[ "$v" =~ ^v?1\.[0-9]+$ ]]; then
    var=K8S_${v#v}
    var=${var//./_}
    [[ -n "${!var:-}" ]] || die "K8S_VERSION='$v': no release pinned for that minor ($var in versions.sh)"
    v=${!var}
  fi
  [[ "$v" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "K8S_VERSION='$v': want 'current', a minor such as 1.16, or a release such as $K8S_CURRENT"
  echo "$v"
}

# Each release gets its own cluster so eras can run side by side: etcdproof for
# the current one, etcdproof-v1-16 for 1.16, unless ETCDPROOF_CLUSTER names one.
default_cluster_name() {
  local v minor
  v=$(k8s_version) || exit  # errexit is off inside $(...)
  [[ "$v" == "$K8S_CURRENT" ]] && { echo etcdproof; return; }
  minor=${v%.*}
  echo "etcdproof-${minor//./-}"
}
CLUSTER_NAME=${ETCDPROOF_CLUSTER:-}
[[ -n "$CLUSTER_NAME" ]] || CLUSTER_NAME=$(default_cluster_name)
[[ "$CLUSTER_NAME" =~ ^[a-z0-9][a-z0-9.-]*$ ]] || die "ETCDPROOF_CLUSTER='$CLUSTER_NAME' is not a valid kind cluster name"
KUBE_CONTEXT=kind-$CLUSTER_NAME
CLUSTER_DIR=$ETCDPROOF_CACHE/clusters/$CLUSTER_NAME
# Stable paths the conformance suite reads.
CLUSTER_KUBECONFIG=$CLUSTER_DIR/kubeconfig
AUDIT_DIR=$CLUSTER_DIR/audit
AUDIT_LOG=$AUDIT_DIR/audit.log
KUBECTL=$ETCDPROOF_CACHE/bin/kubectl

# kind_workers: worker nodes for KIND_TOPOLOGY ("" or 3workers).
kind_workers() {
  case ${KIND_TOPOLOGY:-} in
    "") echo 0 ;;
    3workers) echo 3 ;;
    *) die "KIND_TOPOLOGY='$KIND_TOPOLOGY': want empty (one node) or 3workers" ;;
  esac
}

# substrate_mode: "offline" (every image built here) or "online" (kind's
# published node image). ETCDPROOF_OFFLINE=1/0 decides; otherwise a probe of
# Docker Hub's registry API does.
substrate_mode() {
  case ${ETCDPROOF_OFFLINE:-} in
    1) echo offline ;;
    0) echo online ;;
    "")
      local code
      code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' https://registry-1.docker.io/v2/ || true)
      if [[ "$code" == 200 || "$code" == 401 ]]; then echo online; else echo offline; fi
      ;;
    *) die "ETCDPROOF_OFFLINE='$ETCDPROOF_OFFLINE': want 1 (build everything) or 0 (pull kind's node image)" ;;
  esac
}

# online_node_image VERSION: kind's published image for VERSION's minor.
online_node_image() {
  local minor var
  minor=${1#v}; minor=${minor%.*}
  var=KIND_NODE_IMAGE_ONLINE_v${minor//./_}
  [[ -n "${!var:-}" ]] || die "no published kind $KIND_VERSION node image pinned for Kubernetes $1 ($var in versions.sh)"
  echo "${!var}"
}

# cluster_exists: kind labels every node container with its cluster's name.
cluster_exists() {
  [[ -n "$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$CLUSTER_NAME" 2>/dev/null)" ]]
}

# etcdproof_cli ARGS...: bin/etcdproof, rebuilt first (seconds when nothing
# changed): the scripts reach clusters only through `etcdproof cluster`.
etcdproof_cli() {
  (cd "$ETCDPROOF_ROOT" && CGO_ENABLED=0 go build -trimpath -o bin/etcdproof ./conformance/cmd/etcdproof) &&
    "$ETCDPROOF_ROOT/bin/etcdproof" "$@"
}

# load_images IMAGE...: copy images from Docker into the cluster's nodes.
load_images() { etcdproof_cli cluster load --name "$CLUSTER_NAME" --cluster-dir "$CLUSTER_DIR" "$@"; }
