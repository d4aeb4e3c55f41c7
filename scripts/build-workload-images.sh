#!/usr/bin/env bash
# Build the images etcd operators run, from source, and load them into the
# kind cluster when it exists:
#   quay.io/coreos/etcd:vX.Y.Z and gcr.io/etcd-development/etcd:vX.Y.Z for each
#   ETCD_WORKLOAD_VERSIONS entry (etcd and etcdctl in /usr/local/bin, busybox sh),
#   busybox under BUSYBOX_WORKLOAD_TAGS, resolving names like glibc does.
# usage: build-workload-images.sh      env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

ETCD_REPOSITORIES=(quay.io/coreos/etcd gcr.io/etcd-development/etcd)
read -r -a busybox_tags <<<"$BUSYBOX_WORKLOAD_TAGS"

etcd_image() {
  local version=$1 dir ctx="$ETCDPROOF_CACHE/images/ctx/etcd-$1" repo
  dir=$("$ETCDPROOF_ROOT/scripts/build-etcd.sh" "$version")
  rm -rf "$ctx"
  mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/var/etcd" "$ctx/rootfs/var/lib/etcd"
  cp "$dir/etcd" "$dir/etcdctl" "$ctx/rootfs/usr/local/bin/"
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $BUSYBOX_IMAGE
COPY rootfs/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EXPOSE 2379 2380
CMD ["/usr/local/bin/etcd"]
DOCKERFILE
  build_context_image "${ETCD_REPOSITORIES[0]}:$version" "$ctx"
  for repo in "${ETCD_REPOSITORIES[@]:1}"; do docker tag "${ETCD_REPOSITORIES[0]}:$version" "$repo:$version"; done
  rm -rf "$ctx"
}

# Operators' DNS-check init containers loop on `nslookup <pod>.<svc>.<ns>.svc`
# and need resolv.conf's search domains honoured. Busybox's nslookup ignores
# them for dotted names, and busybox sh runs its own applet even when another
# nslookup is on PATH; so this image has dash (glibc) as /bin/sh and a Go
# nslookup, with busybox for every other command.
busybox_glibc_image() {
  local bb rootfs="$ETCDPROOF_CACHE/rootfs/debootstrap-$DEBIAN_SUITE" ctx="$ETCDPROOF_CACHE/images/ctx/busybox-glibc" tag
  bb=$(busybox_rootfs)
  "$ETCDPROOF_ROOT/scripts/build-base-image.sh" rootfs >/dev/null
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp -a "$bb" "$ctx/rootfs"
  rm -f "$ctx/rootfs/bin/sh" "$ctx/rootfs/bin/nslookup"
  mkdir -p "$ctx/rootfs/lib/x86_64-linux-gnu" "$ctx/rootfs/lib64"
  install -m 0755 "$rootfs/usr/bin/dash" "$ctx/rootfs/bin/sh"
  install -m 0755 "$rootfs/usr/lib/x86_64-linux-gnu/libc.so.6" "$ctx/rootfs/lib/x86_64-linux-gnu/"
  install -m 0755 "$rootfs/usr/lib64/ld-linux-x86-64.so.2" "$ctx/rootfs/lib64/"
  (cd "$ETCDPROOF_ROOT" && go build -trimpath -ldflags="-s -w" -o "$ctx/rootfs/bin/nslookup" ./scripts/nslookup)
  printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD ["/bin/sh"]\n' >"$ctx/Dockerfile"
  build_context_image "${busybox_tags[0]}" "$ctx"
  for tag in "${busybox_tags[@]:1}"; do docker tag "${busybox_tags[0]}" "$tag"; done
  rm -rf "$ctx"
}

images=()
step busybox-image "" ensure_busybox_image
for v in $ETCD_WORKLOAD_VERSIONS; do
  image_step "workload-etcd-$v" "${ETCD_REPOSITORIES[-1]}:$v" etcd_image "$v"
  for repo in "${ETCD_REPOSITORIES[@]}"; do images+=("$repo:$v"); done
done
image_step workload-busybox "${busybox_tags[-1]}" busybox_glibc_image
images+=("${busybox_tags[@]}")

if cluster_exists; then
  step "workload-load-$CLUSTER_NAME" "" "$KIND" load docker-image --name "$CLUSTER_NAME" "${images[@]}"
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make images)"
fi
printf '%s\n' "${images[@]}"
