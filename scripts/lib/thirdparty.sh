# shellcheck shell=bash
# Builders of third-party etcd operators' images from the Go module proxy,
# under the image names their own install manifests use (used by
# build-thirdparty-images.sh, which builds them all, and build-run-images.sh,
# which builds those a run needs). The suite certifies these operators;
# nothing of theirs is vendored here, only the versions their builds were
# pinned to.
#   quay.io/coreos/etcd-operator:v0.9.4   etcd-operator, etcd-backup-operator and
#                                         etcd-restore-operator in /usr/local/bin
#   tutum/curl:latest                     what v0.9.4's restore fetches a
#                                         backup with (pulled on every start:
#                                         also pushed to the registry mirror)
# The etcd and busybox images their clusters run come from workload.sh.
# Needs common.sh, images.sh and baseimages.sh.

COREOS_OPERATOR_IMAGE=quay.io/coreos/etcd-operator:$COREOS_OPERATOR_VERSION
TUTUM_CURL_IMAGE=tutum/curl:latest
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
  # Named as its release names them (hack/build/build: etcd-<cmd>).
  for cmd in operator backup-operator restore-operator; do
    GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "bin/etcd-$cmd.tmp" \
      "github.com/coreos/etcd-operator/cmd/$cmd"
  done
  for cmd in operator backup-operator restore-operator; do mv "bin/etcd-$cmd.tmp" "bin/etcd-$cmd"; done
}

# The shape of v0.9.4's hack/build/Dockerfile: the three programs in
# /usr/local/bin under their release names (Deployments run them by name), no
# entrypoint, and user etcd-operator as `adduser -D` makes it; busybox stands
# in for Alpine 3.6 (a shell, a writable /tmp for the operator's glog
# files). CA certificates are left out: nothing here reaches a TLS endpoint
# whose CA is not given.
coreos_image() {
  local ctx="$ETCDPROOF_CACHE/images/ctx/coreos-etcd-operator" cmd
  ensure_busybox_image
  rm -rf "$ctx"
  mkdir -p "$ctx"
  {
    echo "FROM $BUSYBOX_IMAGE"
    for cmd in etcd-backup-operator etcd-restore-operator etcd-operator; do
      cp "$coreos_bin/$cmd" "$ctx/"
      echo "COPY $cmd /usr/local/bin/$cmd"
    done
    # What Alpine's `adduser -D etcd-operator` writes (Debian's busybox has no adduser).
    echo "RUN echo 'etcd-operator:x:1000:1000:Linux User,,,:/home/etcd-operator:/bin/sh' >>/etc/passwd && \\"
    echo "    echo 'etcd-operator:x:1000:' >>/etc/group && mkdir -p /home/etcd-operator && chown 1000:1000 /home/etcd-operator"
    echo "USER etcd-operator"
  } >"$ctx/Dockerfile"
  build_context_image "$COREOS_OPERATOR_IMAGE" "$ctx"
  rm -rf "$ctx"
}

# make_coreos_operator: COREOS_OPERATOR_IMAGE, its programs built first.
make_coreos_operator() {
  step "coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$coreos_bin/etcd-restore-operator" coreos_build
  # An image from the earlier recipe (root, programs named backup-operator and
  # restore-operator) is made again.
  if [[ "$(docker image inspect -f '{{.Config.User}}' "$COREOS_OPERATOR_IMAGE" 2>/dev/null)" != etcd-operator ]]; then
    docker rmi "$COREOS_OPERATOR_IMAGE" >/dev/null 2>&1 || true
  fi
  image_step "image-coreos-etcd-operator-$COREOS_OPERATOR_VERSION" "$COREOS_OPERATOR_IMAGE" coreos_image
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
  rootfs_image "$TUTUM_CURL_IMAGE" "$rootfs" /bin/bash
  rm -rf "$rootfs"
}

# make_tutum_curl: TUTUM_CURL_IMAGE.
make_tutum_curl() { image_step image-tutum-curl "$TUTUM_CURL_IMAGE" tutum_curl_image; }
