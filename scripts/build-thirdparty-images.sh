#!/usr/bin/env bash
# Build every third-party operator image from the Go module proxy, load them
# into the kind cluster when it exists and push MIRRORED_IMAGES to its
# registry mirror (make thirdparty-images): coreos etcd-operator v0.9.4 and
# tutum/curl (scripts/lib/thirdparty.sh says how). A run builds only what it
# needs: build-run-images.sh.
# usage: build-thirdparty-images.sh      env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/baseimages.sh
source "$ETCDPROOF_ROOT/scripts/lib/baseimages.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"
# shellcheck source=scripts/lib/mirror.sh
source "$ETCDPROOF_ROOT/scripts/lib/mirror.sh"
# shellcheck source=scripts/lib/thirdparty.sh
source "$ETCDPROOF_ROOT/scripts/lib/thirdparty.sh"

make_coreos_operator
make_tutum_curl
images=("$COREOS_OPERATOR_IMAGE" "$TUTUM_CURL_IMAGE")

if cluster_exists; then
  step "thirdparty-load-$CLUSTER_NAME" "" load_images "${images[@]}"
  # shellcheck disable=SC2086 # a list of image names
  step "thirdparty-mirror" "" push_to_mirror $MIRRORED_IMAGES
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make thirdparty-images)"
fi
printf '%s\n' "${images[@]}"
