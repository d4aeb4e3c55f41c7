# shellcheck shell=bash
# Helpers to build container images without a registry.

# image_exists REF: true when the local Docker daemon has REF.
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# Busybox (Debian's static build) is the shell/userland of the small images:
# probe, component images, workload busybox, etcd images.
BUSYBOX_IMAGE=etcdproof/busybox:$DEBIAN_SUITE

# busybox_rootfs: prints a folder holding bin/busybox, every applet as a link,
# and the /etc and /tmp a container expects.
busybox_rootfs() {
  local dir="$ETCDPROOF_CACHE/rootfs/busybox-$DEBIAN_SUITE"
  step "busybox-rootfs" "$dir/bin/busybox" make_busybox_rootfs "$dir" >&2
  echo "$dir"
}

make_busybox_rootfs() {
  local dir=$1 tmp applet
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q busybox-static)
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/x"
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp/bin" "$dir.tmp/etc" "$dir.tmp/tmp" "$dir.tmp/usr/local/bin"
  chmod 1777 "$dir.tmp/tmp"
  install -m 0755 "$tmp/x/bin/busybox" "$dir.tmp/bin/busybox"
  for applet in $("$dir.tmp/bin/busybox" --list); do
    [[ "$applet" == busybox ]] || ln -s busybox "$dir.tmp/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/false\n' >"$dir.tmp/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$dir.tmp/etc/group"
  rm -rf "$tmp" "$dir"
  mv "$dir.tmp" "$dir"
}

# build_context_image TAG DIR: `docker build` of a prepared context folder.
build_context_image() {
  local tag=$1 dir=$2
  docker build -q -t "$tag" "$dir" >/dev/null
}

# ensure_busybox_image: the busybox image every small image starts from.
ensure_busybox_image() {
  local rootfs ctx
  image_exists "$BUSYBOX_IMAGE" && return 0
  rootfs=$(busybox_rootfs)
  ctx="$ETCDPROOF_CACHE/images/busybox"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp -a "$rootfs" "$ctx/rootfs"
  printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD ["/bin/sh"]\n' >"$ctx/Dockerfile"
  build_context_image "$BUSYBOX_IMAGE" "$ctx"
}

# image_step NAME TAG CMD...: like `step`, cached on the image TAG existing.
image_step() {
  local name=$1 tag=$2; shift 2
  if image_exists "$tag"; then
    log "== $name: cached (image $tag)"
    return 0
  fi
  step "$name" "" "$@"
  image_exists "$tag" || die "step '$name' finished but image $tag is missing; see $LOG_DIR/$name.log"
}

# Images the offline node is made of.
# shellcheck disable=SC2034 # used by the scripts that source this file
# (A function: node_pins may change CONTAINERD_VERSION after this file is sourced.)
kind_base_image() { echo "etcdproof/kind-base:$KIND_VERSION-$DEBIAN_SUITE-containerd-$CONTAINERD_VERSION"; }
offline_node_image() { echo "etcdproof/kind-node:$1"; }

# binary_image TAG BASE ENTRYPOINT BINARY...: an image FROM BASE holding each
# BINARY in /usr/local/bin; ENTRYPOINT "" leaves the entrypoint empty.
binary_image() {
  local tag=$1 base=$2 entrypoint=$3; shift 3
  local ctx="$ETCDPROOF_CACHE/images/ctx/${tag//[\/:]/_}" b
  rm -rf "$ctx"
  mkdir -p "$ctx"
  {
    echo "FROM $base"
    echo "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    for b in "$@"; do
      cp "$b" "$ctx/"
      echo "COPY $(basename "$b") /usr/local/bin/$(basename "$b")"
    done
    if [[ -n "$entrypoint" ]]; then echo "ENTRYPOINT [\"$entrypoint\"]"; else echo "ENTRYPOINT []"; fi
  } >"$ctx/Dockerfile"
  build_context_image "$tag" "$ctx"
  rm -rf "$ctx"
}

# save_images OUT REF...: `docker save` of every REF into one archive whose
# first metadata entry is a `repositories` file naming every REF in full.
# kind's node-image build reads the tags of an archive from its first
# metadata entry only, and compares names literally (docker.io/...).
save_images() {
  local out=$1; shift
  local tmp
  tmp=$(mktemp -d)
  docker save "$@" | tar -x -C "$tmp"
  printf '%s\n' "$@" | jq -R 'capture("^(?<repo>.+):(?<tag>[^:/]+)$")' |
    jq -s 'reduce .[] as $r ({}; .[$r.repo][$r.tag] = "")' >"$tmp/repositories"
  (cd "$tmp" && find . -mindepth 1 -maxdepth 1 ! -name repositories ! -name manifest.json -printf '%P\n' |
    sort | tar -c -f "$out.tmp" repositories manifest.json -T -)
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
}
