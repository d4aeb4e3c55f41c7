# shellcheck shell=bash
# Local stand-ins for the base images upstream etcd releases are built FROM.
# Each has the shape of the upstream base (files, users, shell or no shell),
# built from Debian's own packages, under an etcdproof/ name: only the etcd
# images built on them carry upstream names.

DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# debian_download SUITE DEST PKG...: download the .debs of PKG from Debian
# SUITE into DEST, with an apt state of its own (the host's apt is untouched).
debian_download() {
  local suite=$1 dest=$2; shift 2
  local state="$ETCDPROOF_CACHE/apt/$suite"
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dest"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR $suite main" >"$state/sources.list"
  local opts=(-q -o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache" -o Dir::State::status=/dev/null)
  apt-get "${opts[@]}" update >/dev/null
  (cd "$dest" && apt-get "${opts[@]}" download "$@" >/dev/null)
}

# distroless_static_rootfs SUITE DIR: the files of gcr.io/distroless/static
# (its base/static rules): root, nobody and nonroot users, /tmp, /home/nonroot,
# CA certificates, tzdata, netbase's /etc files, os-release and the packages'
# dpkg status and copyright files. No shell, no package manager, no libc.
distroless_static_rootfs() {
  local suite=$1 dir=$2 tmp deb pkg
  local packages=(base-files netbase tzdata ca-certificates)
  tmp=$(mktemp -d)
  debian_download "$suite" "$tmp/debs" "${packages[@]}"
  rm -rf "$dir"
  mkdir -p "$dir"/{etc/ssl/certs,tmp,root,home/nonroot,usr/lib,usr/share/doc,var/lib/dpkg/status.d}
  for pkg in "${packages[@]}"; do
    deb=$(echo "$tmp/debs/${pkg}"_*.deb)
    dpkg-deb -x "$deb" "$tmp/x"
    dpkg-deb -f "$deb" >"$dir/var/lib/dpkg/status.d/$pkg"
    mkdir -p "$dir/usr/share/doc/$pkg"
    cp "$tmp/x/usr/share/doc/$pkg/copyright" "$dir/usr/share/doc/$pkg/"
  done
  cp "$tmp/x/usr/lib/os-release" "$dir/usr/lib/os-release"
  ln -s ../usr/lib/os-release "$dir/etc/os-release"
  cp "$tmp/x/etc/debian_version" "$dir/etc/"
  for f in services protocols rpc ethertypes; do
    if [[ -e "$tmp/x/etc/$f" ]]; then cp "$tmp/x/etc/$f" "$dir/etc/"; fi
  done
  cp -a "$tmp/x/usr/share/zoneinfo" "$dir/usr/share/"
  cat "$tmp"/x/usr/share/ca-certificates/mozilla/*.crt >"$dir/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' >"$dir/etc/group"
  printf 'hosts: files dns\n' >"$dir/etc/nsswitch.conf"
  chmod 1777 "$dir/tmp"
  chmod 0700 "$dir/root"
  chown 65532:65532 "$dir/home/nonroot"
  rm -rf "$tmp"
}

# rootfs_image TAG DIR CMD...: an image FROM scratch holding DIR (owners kept:
# ADD of a tar keeps them, COPY would not) with CMD as its command.
rootfs_image() {
  local tag=$1 dir=$2; shift 2
  local ctx="$ETCDPROOF_CACHE/images/ctx/${tag//[\/:]/_}" cmd
  rm -rf "$ctx"
  mkdir -p "$ctx"
  tar -C "$dir" --numeric-owner -cf "$ctx/rootfs.tar" .
  cmd=$(printf '"%s",' "$@")
  {
    echo "FROM scratch"
    echo "ADD rootfs.tar /"
    echo "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    if [[ "$tag" == *distroless* ]]; then echo "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"; fi
    if (($#)); then echo "CMD [${cmd%,}]"; fi
  } >"$ctx/Dockerfile"
  build_context_image "$tag" "$ctx"
  rm -rf "$ctx"
}

# distroless_static_image DEBIAN_RELEASE: etcdproof/distroless-static:debianN.
distroless_static_image() {
  local release=$1 suite dir="$ETCDPROOF_CACHE/rootfs/distroless-static-$1"
  suite=$(debian_suite "$release")
  distroless_static_rootfs "$suite" "$dir"
  rootfs_image "etcdproof/distroless-static:$release" "$dir"
}

# debian_image SUITE: etcdproof/debian:SUITE, like Docker's debian:SUITE
# images (a minbase debootstrap: a shell, coreutils, apt).
debian_image() {
  local suite=$1 dir="$ETCDPROOF_CACHE/rootfs/debian-minbase-$1"
  if [[ ! -x "$dir/bin/sh" ]]; then
    rm -rf "$dir.tmp"
    debootstrap --variant=minbase "$suite" "$dir.tmp" "$DEBIAN_MIRROR"
    rm -rf "$dir.tmp"/var/cache/apt/archives/*.deb "$dir.tmp"/var/lib/apt/lists/*
    mv "$dir.tmp" "$dir"
  fi
  rootfs_image "etcdproof/debian:$suite" "$dir" bash
}

debian_suite() {
  case $1 in
    debian11) echo bullseye ;;
    debian12) echo bookworm ;;
    *) die "no Debian suite for $1" ;;
  esac
}

# local_base_for FROM: the local image standing in for a Dockerfile's FROM
# image (its reference, without a digest), or nothing if there is none.
local_base_for() {
  case $1 in
    gcr.io/distroless/static-debian11*) echo etcdproof/distroless-static:debian11 ;;
    gcr.io/distroless/static-debian12*) echo etcdproof/distroless-static:debian12 ;;
    debian:bullseye*) echo etcdproof/debian:bullseye ;;
    debian:bookworm*) echo etcdproof/debian:bookworm ;;
  esac
}

# ensure_local_base IMAGE: build one of local_base_for's images if missing.
ensure_local_base() {
  local image=$1
  image_exists "$image" && return 0
  case $image in
    etcdproof/distroless-static:*) step "base-${image##*:}-distroless-static" "" distroless_static_image "${image##*:}" ;;
    etcdproof/debian:*) step "base-debian-${image##*:}" "" debian_image "${image##*:}" ;;
  esac
}
