#!/usr/bin/env bash
# Package one static binary as a distroless-like image (FROM scratch, user
# 65532, CA certificates, writable /tmp) and load it into the kind cluster
# when one exists. Used for the operator and the suite's in-cluster pods.
# usage: build-image.sh BINARY TAG [LINK...]     env: ETCDPROOF_CLUSTER (etcdproof)
# Each LINK is another program name in /usr/local/bin for the same binary,
# which tells the names apart by argv[0] (the operator image carries coreos'
# etcd-backup-operator and etcd-restore-operator so).
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

binary=${1:?usage: build-image.sh BINARY TAG}
tag=${2:?usage: build-image.sh BINARY TAG}
[[ -f "$binary" && -x "$binary" ]] || die "build-image.sh: $binary is not an executable file (build it first)"
if ldd "$binary" >/dev/null 2>&1; then
  die "build-image.sh: $binary is dynamically linked; build it with CGO_ENABLED=0 (the image has no libc)"
fi
shift 2
links=("$@")
binary_name=$(basename "$binary")
safe=${tag//[\/:]/_}

build() {
  local ctx="$ETCDPROOF_CACHE/images/ctx/$safe" r
  r="$ctx/rootfs"
  rm -rf "$ctx"
  mkdir -p "$r/etc/ssl/certs" "$r/tmp" "$r/home/nonroot" "$r/usr/local/bin"
  chmod 1777 "$r/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"; fi
  install -m 0755 "$binary" "$r/usr/local/bin/$binary_name"
  local link
  for link in "${links[@]}"; do ln -s "$binary_name" "$r/usr/local/bin/$link"; done
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/$binary_name"]
DOCKERFILE
  build_context_image "$tag" "$ctx"
  rm -rf "$ctx"
}

# Always rebuilt: the binary changes between runs and the build takes seconds.
step "image-$safe" "" build
if cluster_exists; then
  step "image-load-$safe" "" load_images "$tag"
else
  log "cluster $CLUSTER_NAME does not exist: $tag built, not loaded"
fi
echo "$tag"
