#!/usr/bin/env bash
# Delete the kind cluster and its files (kubeconfig, audit log). Idempotent.
# usage: cluster-down.sh      env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

if cluster_exists; then
  step "cluster-delete-$CLUSTER_NAME" "" etcdproof_cli cluster down --name "$CLUSTER_NAME" --cluster-dir "$CLUSTER_DIR"
else
  log "== cluster $CLUSTER_NAME does not exist"
fi
# kind removes its node containers and their anonymous volumes; the shared
# "kind" network stays while other kind clusters use it.
if docker network inspect kind >/dev/null 2>&1 &&
  [[ -z "$(docker ps -aq --filter network=kind)" ]]; then
  docker network rm kind >/dev/null
  log "removed the unused docker network 'kind'"
fi
rm -rf "$CLUSTER_DIR"
