#!/usr/bin/env bash
# Build etcdproof/memcached:<version> (our name, not an upstream image), the
# memcached the example operator (examples/memcached-operator) runs: Debian
# bookworm's memcached package and the shared libraries it links, on the
# files of a distroless base (users, CA certificates, tzdata, dpkg status),
# with no shell or package manager; user 11211, ENTRYPOINT memcached. Loads it
# into the kind cluster when one exists.
# usage: build-memcached-image.sh     prints the tag    env: ETCDPROOF_CLUSTER (etcdproof)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/baseimages.sh
source "$ETCDPROOF_ROOT/scripts/lib/baseimages.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

SUITE=bookworm
# The package's version in bookworm. The tag is this version with what a tag
# cannot hold (an epoch's ':', '+', '~') made '_'. The operator's default image
# (DefaultImage in examples/memcached-operator/internal/controller) and
# config/manager name the tag: change them together (the example's tests
# check). When bookworm's next point release replaces the package, the
# download below fails: move all three to the new version.
MEMCACHED_DEBIAN_VERSION=1.6.18-1
# The image's user, which the operator's pods run as.
MEMCACHED_UID=11211

version_tag=${MEMCACHED_DEBIAN_VERSION//[^A-Za-z0-9_.-]/_}
tag=etcdproof/memcached:$version_tag
safe=${tag//[\/:]/_}

# library_packages DEBS: downloads into DEBS, after the memcached package, each
# package it depends on that is in Debian's section libs, and theirs, and
# prints the names of those libraries. Other dependencies (adduser, perl,
# lsb-base, init-system-helpers) serve the package's maintainer scripts and init
# scripts, which the image runs neither of.
library_packages() {
  local debs=$1 pkg deb dep
  local -A seen=([memcached]=1)
  local pending=(memcached) next libs=()
  while ((${#pending[@]})); do
    next=()
    for pkg in "${pending[@]}"; do
      deb=$(echo "$debs/${pkg}"_*.deb)
      # "a (>= 1), b | c, d:any" → a b d: the first of alternatives, no
      # version or architecture qualifier.
      for dep in $(dpkg-deb -f "$deb" Pre-Depends Depends | sed -e 's/^[A-Za-z-]*://' | tr ',' '\n' |
        sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g'); do
        [[ -n "$dep" && -z "${seen[$dep]:-}" ]] || continue
        seen[$dep]=1
        next+=("$dep")
      done
    done
    ((${#next[@]})) || break
    debian_download "$SUITE" "$debs" "${next[@]}"
    pending=()
    for pkg in "${next[@]}"; do
      deb=$(echo "$debs/${pkg}"_*.deb)
      [[ "$(dpkg-deb -f "$deb" Section)" == libs ]] || continue
      libs+=("$pkg")
      pending+=("$pkg")
    done
  done
  printf '%s\n' "${libs[@]}"
}

# add_package ROOTFS DEB [FILE...]: unpack DEB into ROOTFS (only FILEs if
# given), with its copyright and its dpkg status entry, as distroless records
# packages (scanners read var/lib/dpkg/status.d); no other documentation.
add_package() {
  local dir=$1 deb=$2 pkg x f doc
  shift 2
  pkg=$(dpkg-deb -f "$deb" Package)
  x=$(mktemp -d)
  dpkg-deb -x "$deb" "$x"
  doc=usr/share/doc/$pkg
  if [[ -L "$x/$doc" ]]; then
    # A link to the documentation of a package it depends on (libgcc-s1 →
    # gcc-12-base), which is in the image too.
    mkdir -p "$dir/usr/share/doc"
    cp -a "$x/$doc" "$dir/$doc"
  else
    install -D -m 0644 "$x/$doc/copyright" "$dir/$doc/copyright"
  fi
  if (($#)); then
    for f in "$@"; do install -D -m 0755 "$x/$f" "$dir/$f"; done
  else
    rm -rf "$x/usr/share/doc" "$x/usr/share/man" "$x/usr/share/lintian" "$x/usr/share/info"
    cp -a "$x/." "$dir/"
  fi
  dpkg-deb -f "$deb" >"$dir/var/lib/dpkg/status.d/$pkg"
  rm -rf "$x"
}

# check_libraries ROOTFS: every library memcached and its libraries link
# (ELF NEEDED) is in ROOTFS, so a dependency missed above fails here, not in
# a pod.
check_libraries() {
  local dir=$1 elf lib missing=()
  while read -r elf; do
    for lib in $(readelf -d "$elf" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [[ -n "$(find "$dir" -name "$lib" -print -quit)" ]] || missing+=("$lib (of ${elf#"$dir"})")
    done
  done < <(find "$dir/usr/bin/memcached" "$dir/lib" "$dir/usr/lib" -type f \( -name memcached -o -name '*.so*' \))
  ((${#missing[@]} == 0)) || die "libraries missing from the image: ${missing[*]}"
}

build() {
  local work="$ETCDPROOF_CACHE/images/ctx/$safe" pkg
  local debs=$work/debs rootfs=$work/rootfs
  rm -rf "$work"
  mkdir -p "$debs"
  debian_download "$SUITE" "$debs" "memcached=$MEMCACHED_DEBIAN_VERSION" ||
    die "bookworm has no memcached $MEMCACHED_DEBIAN_VERSION any more: update MEMCACHED_DEBIAN_VERSION here, DefaultImage and config/manager of examples/memcached-operator"
  mapfile -t libs < <(library_packages "$debs")
  log "memcached $MEMCACHED_DEBIAN_VERSION with ${libs[*]}"

  distroless_static_rootfs "$SUITE" "$rootfs"
  for pkg in "${libs[@]}"; do add_package "$rootfs" "$(echo "$debs/${pkg}"_*.deb)"; done
  add_package "$rootfs" "$(echo "$debs"/memcached_*.deb)" usr/bin/memcached
  echo "memcache:x:$MEMCACHED_UID:$MEMCACHED_UID:memcached:/nonexistent:/sbin/nologin" >>"$rootfs/etc/passwd"
  echo "memcache:x:$MEMCACHED_UID:" >>"$rootfs/etc/group"
  check_libraries "$rootfs"

  # rootfs_image writes a CMD; memcached's image takes its flags as
  # arguments, so ENTRYPOINT, and a user of its own.
  tar -C "$rootfs" --numeric-owner -cf "$work/rootfs.tar" .
  cat >"$work/Dockerfile" <<DOCKERFILE
FROM scratch
ADD rootfs.tar /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER $MEMCACHED_UID:$MEMCACHED_UID
EXPOSE 11211
ENTRYPOINT ["/usr/bin/memcached"]
DOCKERFILE
  rm -rf "$debs" "$rootfs"
  build_context_image "$tag" "$work"
  rm -rf "$work"
  # The loader finds every library and memcached starts as the image's user.
  docker run --rm "$tag" -V
}

image_step "image-$safe" "$tag" build
if cluster_exists; then
  step "image-load-$safe" "" load_images "$tag"
else
  log "cluster $CLUSTER_NAME does not exist: $tag built, not loaded"
fi
echo "$tag"
