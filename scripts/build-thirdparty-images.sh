#!/usr/bin/env bash
# Build third-party etcd operators from the Go module proxy, package them under
# the image names their own install manifests use, and load them into the kind
# cluster when it exists. The suite certifies these operators; nothing of
# theirs is vendored here, only the versions their builds were pinned to.
#   quay.io/coreos/etcd-operator:v0.9.4   etcd-operator, backup-operator and
#                                         restore-operator in /usr/local/bin
# The etcd and busybox images their clusters run come from build-workload-images.sh.
# usage: build-thirdparty-images.sh      env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

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

step busybox-image "" ensure_busybox_image
step "coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$coreos_bin/restore-operator" coreos_build
image_step "image-coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$COREOS_OPERATOR_IMAGE" coreos_image
images=("$COREOS_OPERATOR_IMAGE")

if cluster_exists; then
  step "thirdparty-load-$CLUSTER_NAME" "" load_images "${images[@]}"
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make thirdparty-images)"
fi
printf '%s\n' "${images[@]}"
