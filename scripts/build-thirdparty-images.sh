#!/usr/bin/env bash
# Build third-party etcd operators from the Go module proxy, package them under
# the image names their own install manifests use, and load them into the kind
# cluster when it exists. The suite certifies these operators; nothing of
# theirs is vendored here, only the versions their builds were pinned to.
#   quay.io/coreos/etcd-operator:v0.9.4   etcd-operator, backup-operator and
#                                         restore-operator in /usr/local/bin
#   tutum/curl:latest                     what v0.9.4's restore fetches a
#                                         backup with (pulled on every start:
#                                         also pushed to the registry mirror)
# The etcd and busybox images their clusters run come from build-workload-images.sh.
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

COREOS_OPERATOR_IMAGE=quay.io/coreos/etcd-operator:$COREOS_OPERATOR_VERSION
coreos_pins="$ETCDPROOF_ROOT/scripts/thirdparty/coreos-etcd-operator-$COREOS_OPERATOR_VERSION.go.mod"
coreos_builder="$ETCDPROOF_CACHE/thirdparty/coreos-etcd-operator-$COREOS_OPERATOR_VERSION"
coreos_bin="$coreos_builder/bin"

# v0.9.4 predates Go modules; the pinned builder module is the only way its
# dependencies resolve to what it was released with. The binaries only read
# in-cluster config, so they build unchanged with CGO disabled.
coreos_build() {
  local cmd
  [[ -f "$coreos_pins" ]] || die "missing $coreos_pins"
  rm -rf "$coreos_builder"
  mkdir -p "$coreos_builder" "$coreos_bin"
  cp "$coreos_pins" "$coreos_builder/go.mod"
  printf 'package builder\n' >"$coreos_builder/builder.go"
  cd "$coreos_builder" || return
  GOFLAGS=-mod=mod go mod download github.com/coreos/etcd-operator
  for cmd in operator backup-operator restore-operator; do
    GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "bin/${cmd/#operator/etcd-operator}.tmp" \
      "github.com/coreos/etcd-operator/cmd/$cmd"
  done
  for cmd in etcd-operator backup-operator restore-operator; do mv "bin/$cmd.tmp" "bin/$cmd"; done
}

# The book's Deployment runs `etcd-operator` by name; the operator writes glog
# files to /tmp, so the image needs a writable /tmp (the busybox base has one).
coreos_image() {
  binary_image "$COREOS_OPERATOR_IMAGE" "$BUSYBOX_IMAGE" /usr/local/bin/etcd-operator \
    "$coreos_bin/etcd-operator" "$coreos_bin/backup-operator" "$coreos_bin/restore-operator"
}

# tutum/curl is `FROM ubuntu:trusty` plus Ubuntu's curl, with the base's
# /bin/bash command and root user; coreos runs `/bin/bash -ec 'curl ...'` in
# it. Ubuntu's archive is not reachable here: Debian's minimal system (the
# same family: bash, coreutils, glibc, apt) plus Debian's curl stands in.
tutum_curl_image() {
  local rootfs="$ETCDPROOF_CACHE/rootfs/tutum-curl-$DEBIAN_SUITE"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=curl,ca-certificates "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR"
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  rootfs_image tutum/curl:latest "$rootfs" /bin/bash
  rm -rf "$rootfs"
}

step busybox-image "" ensure_busybox_image
step "coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$coreos_bin/restore-operator" coreos_build
image_step "image-coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$COREOS_OPERATOR_IMAGE" coreos_image
image_step image-tutum-curl tutum/curl:latest tutum_curl_image
images=("$COREOS_OPERATOR_IMAGE" tutum/curl:latest)

if cluster_exists; then
  step "thirdparty-load-$CLUSTER_NAME" "" load_images "${images[@]}"
  # shellcheck disable=SC2086 # a list of image names
  step "thirdparty-mirror" "" push_to_mirror $MIRRORED_IMAGES
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make thirdparty-images)"
fi
printf '%s\n' "${images[@]}"
