#!/usr/bin/env bash
# Print where the cluster's files and tools are, as shell assignments
# (`eval "$(scripts/cluster-env.sh)"`), or one value: cluster-env.sh KUBECONFIG.
# Reads nothing from the cluster and builds nothing.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

declare -A env=(
  [ETCDPROOF_CLUSTER]=$CLUSTER_NAME
  [KUBECONFIG]=$CLUSTER_KUBECONFIG
  [KUBE_CONTEXT]=$KUBE_CONTEXT
  [KUBECTL]=$KUBECTL
  [ETCDPROOF_AUDIT_LOG]=$AUDIT_LOG
  [K8S_VERSION]=$(k8s_version)
)
if (($# == 1)); then
  [[ -n "${env[$1]+set}" ]] || die "unknown name '$1'; known: ${!env[*]}"
  echo "${env[$1]}"
  exit 0
fi
for k in ETCDPROOF_CLUSTER KUBECONFIG KUBE_CONTEXT KUBECTL ETCDPROOF_AUDIT_LOG K8S_VERSION; do
  printf '%s=%q\n' "$k" "${env[$k]}"
done
