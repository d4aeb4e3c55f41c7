#!/usr/bin/env bash
# Build every image etcd operators run here, from source, and load them into
# the kind cluster when it exists (make images): each etcd release of
# ETCD_WORKLOAD_VERSIONS, busybox and SeaweedFS (scripts/lib/workload.sh says
# how). A run builds only what it needs: build-run-images.sh.
# usage: build-workload-images.sh      env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/baseimages.sh
source "$ETCDPROOF_ROOT/scripts/lib/baseimages.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"
# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"
# shellcheck source=scripts/lib/workload.sh
source "$ETCDPROOF_ROOT/scripts/lib/workload.sh"

images=()
for v in $ETCD_WORKLOAD_VERSIONS; do
  make_etcd_release "$v"
  for repo in "${ETCD_REPOSITORIES[@]}"; do images+=("$repo:$v"); done
done
make_workload_busybox
images+=("${BUSYBOX_TAGS[@]}")
make_seaweedfs
images+=("$SEAWEEDFS_IMAGE")

if cluster_exists; then
  step "workload-load-$CLUSTER_NAME" "" load_images "${images[@]}"
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make images)"
fi
printf '%s\n' "${images[@]}"
