# shellcheck shell=bash
# Builders of the images etcd clusters and the suite run, from source (used by
# build-workload-images.sh, which builds them all, and build-run-images.sh,
# which builds those a run needs):
#   quay.io/coreos/etcd:vX.Y.Z and gcr.io/etcd-development/etcd:vX.Y.Z for each
#   ETCD_WORKLOAD_VERSIONS entry, each built from that release's own Dockerfile
#   on a local base of the same shape (distroless: no shell),
#   busybox under BUSYBOX_WORKLOAD_TAGS, resolving names like glibc does,
#   SEAWEEDFS_IMAGE (our name), the S3 store of the backup-restore check.
# Needs common.sh, images.sh, baseimages.sh and gomodule.sh.

ETCD_REPOSITORIES=(quay.io/coreos/etcd gcr.io/etcd-development/etcd)
read -r -a BUSYBOX_TAGS <<<"$BUSYBOX_WORKLOAD_TAGS"

# etcd_dockerfile VERSION: prints the path of the release's own Dockerfile
# (ETCD_DOCKERFILE_<version> in versions.sh), fetched from the module proxy.
etcd_dockerfile() {
  local spec_var=ETCD_DOCKERFILE_${1//./_} module file dir
  [[ -n "${!spec_var:-}" ]] || die "no $spec_var in scripts/lib/versions.sh: where is etcd $1's Dockerfile?"
  read -r module file <<<"${!spec_var}"
  dir=$(module_source "$module")
  [[ -f "$dir/$file" ]] || die "$module has no $file"
  echo "$dir/$file"
}

# dockerfile_from FILE: the image the Dockerfile starts FROM (flags dropped).
dockerfile_from() {
  awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; exit } }' "$1"
}

# etcd_image VERSION: the release's upstream image, built from its own
# Dockerfile with the FROM line pointing at the local base of the same shape.
etcd_image() {
  local version=$1 dir dockerfile from base ctx="$ETCDPROOF_CACHE/images/ctx/etcd-$1" repo
  dir=$("$ETCDPROOF_ROOT/scripts/build-etcd.sh" "$version")
  dockerfile=$(etcd_dockerfile "$version")
  from=$(dockerfile_from "$dockerfile")
  base=$(local_base_for "$from")
  [[ -n "$base" ]] || die "etcd $version is built FROM $from, which has no local stand-in (scripts/lib/baseimages.sh)"
  ensure_local_base "$base"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp "$dir"/etcd* "$ctx/"
  awk -v base="$base" 'toupper($1) == "FROM" { print "FROM " base; next } { print }' "$dockerfile" >"$ctx/Dockerfile"
  build_context_image "${ETCD_REPOSITORIES[0]}:$version" "$ctx"
  for repo in "${ETCD_REPOSITORIES[@]:1}"; do docker tag "${ETCD_REPOSITORIES[0]}:$version" "$repo:$version"; done
  rm -rf "$ctx"
}

# verify_etcd_image VERSION: the built image has its Dockerfile's shape.
verify_etcd_image() {
  local version=$1 dockerfile
  dockerfile=$(etcd_dockerfile "$version")
  (cd "$ETCDPROOF_ROOT" && go run ./scripts/imagecheck --image "${ETCD_REPOSITORIES[0]}:$version" \
    --dockerfile "$dockerfile" --base "$(local_base_for "$(dockerfile_from "$dockerfile")")")
}

# make_etcd_release VERSION: the release's image under every
# ETCD_REPOSITORIES name, built unless one of its Dockerfile's shape is there.
make_etcd_release() {
  local v=$1
  # An image under this tag from an older recipe (busybox-based) is rebuilt.
  if image_exists "${ETCD_REPOSITORIES[-1]}:$v" && verify_etcd_image "$v" >/dev/null 2>&1; then
    log "== workload-etcd-$v: cached, has its Dockerfile's shape"
  else
    step "workload-etcd-$v" "" etcd_image "$v"
    step "workload-etcd-$v-verify" "" verify_etcd_image "$v"
  fi
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
  build_context_image "${BUSYBOX_TAGS[0]}" "$ctx"
  for tag in "${BUSYBOX_TAGS[@]:1}"; do docker tag "${BUSYBOX_TAGS[0]}" "$tag"; done
  rm -rf "$ctx"
}

# make_workload_busybox: busybox under every BUSYBOX_WORKLOAD_TAGS tag.
make_workload_busybox() { image_step workload-busybox "${BUSYBOX_TAGS[-1]}" busybox_glibc_image; }

# The S3-compatible store the backup-restore check starts in its namespace:
# SeaweedFS's weed on the busybox base (a shell and a writable /tmp).
seaweedfs_image() {
  local weed
  weed=$("$ETCDPROOF_ROOT/scripts/build-seaweedfs.sh")
  ensure_busybox_image
  binary_image "$SEAWEEDFS_IMAGE" "$BUSYBOX_IMAGE" /usr/local/bin/weed "$weed"
}

# make_seaweedfs: SEAWEEDFS_IMAGE.
make_seaweedfs() { image_step objectstore-seaweedfs "$SEAWEEDFS_IMAGE" seaweedfs_image; }
