#!/usr/bin/env bash
# Build the kind base image (kindest/base equivalent) without a registry:
# a debootstrap rootfs plus the files of kind's images/base, containerd, crictl
# and CNI plugins built from the Go module proxy.
# usage: build-base-image.sh [rootfs]   prints the image tag; `rootfs` only
#        runs the (slow, network-bound) debootstrap step, e.g. while Go builds.
# env:   ETCDPROOF_NODE_K8S selects the node-side pins (containerd) of an older
#        Kubernetes release (versions.sh node_pins); each gets its own image.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"

# kind's base Dockerfile package list, plus runc (kind builds its own) and
# ipset (kube-router's image is built on this base).
BASE_PACKAGES=systemd,systemd-sysv,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,fuse-overlayfs,e2fsprogs,bash,ca-certificates,curl,jq,procps,runc,ipset
DEBOOTSTRAP_MIRROR=${DEBOOTSTRAP_MIRROR:-http://deb.debian.org/debian}
rootfs="$ETCDPROOF_CACHE/rootfs/debootstrap-$DEBIAN_SUITE"
KIND_BASE_IMAGE=$(kind_base_image)
# One assembly folder and log per containerd: the eras never share a step.
base_id=containerd-$CONTAINERD_VERSION
work="$ETCDPROOF_CACHE/rootfs/kind-base-$base_id"

debootstrap_rootfs() {
  rm -rf "$rootfs.tmp"
  debootstrap --variant=minbase --include="$BASE_PACKAGES" "$DEBIAN_SUITE" "$rootfs.tmp" "$DEBOOTSTRAP_MIRROR"
  rm -rf "$rootfs.tmp/var/cache/apt/archives/"*.deb "$rootfs.tmp/var/lib/apt/lists/"*
  rm -rf "$rootfs"
  mv "$rootfs.tmp" "$rootfs"
}

# Apply what kind's images/base/Dockerfile does, on a copy of the rootfs.
assemble() {
  local kind_files r=$work containerd_dir crictl_dir cni_dir tool_dirs
  kind_files="$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION/images/base/files"
  [[ -d "$kind_files" ]] || die "kind $KIND_VERSION sources missing ($kind_files); build kind first"
  tool_dirs=$("$ETCDPROOF_ROOT/scripts/build-tools.sh" containerd crictl cni)
  read -r containerd_dir crictl_dir cni_dir <<<"${tool_dirs//$'\n'/ }"
  rm -rf "$r"
  cp -a "$rootfs" "$r"
  install -m 0755 "$kind_files"/usr/local/bin/* "$r/usr/local/bin/"
  mkdir -p "$r/kind" "$r/LICENSES" "$r/etc/containerd" "$r/etc/default" "$r/etc/sysctl.d" \
    "$r/etc/systemd/system/kubelet.service.d" "$r/etc/kubernetes/manifests" "$r/opt/cni/bin"
  cp -r "$kind_files/kind/." "$r/kind/"
  find "$r/kind" -type f -exec chmod 0644 {} +
  chmod 0755 "$r/kind" "$r/kind/bin" "$r"/kind/bin/*
  install -m 0644 "$kind_files"/LICENSES/* "$r/LICENSES/"
  install -m 0644 "$kind_files/etc/crictl.yaml" "$r/etc/"
  install -m 0644 "$kind_files"/etc/containerd/* "$r/etc/containerd/"
  install -m 0644 "$kind_files"/etc/default/* "$r/etc/default/"
  install -m 0644 "$kind_files"/etc/sysctl.d/* "$r/etc/sysctl.d/"
  install -m 0644 "$kind_files"/etc/systemd/system/*.service "$kind_files"/etc/systemd/system/*.slice "$r/etc/systemd/system/"
  install -m 0644 "$kind_files"/etc/systemd/system/kubelet.service.d/* "$r/etc/systemd/system/kubelet.service.d/"
  # Hosts without CAP_SYS_RESOURCE cannot raise oom_score_adj: let containerd clamp it.
  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$r/etc/containerd/config.toml"
  find "$r/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
  rm -f "$r"/lib/systemd/system/multi-user.target.wants/* "$r"/etc/systemd/system/*.wants/* \
    "$r"/lib/systemd/system/local-fs.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*udev* \
    "$r"/lib/systemd/system/sockets.target.wants/*initctl* "$r"/lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>"$r/etc/systemd/journald.conf"
  ln -sf /usr/lib/systemd/systemd "$r/sbin/init"
  chroot "$r" systemctl enable kubelet.service containerd.service undo-mount-hacks.service
  chroot "$r" systemctl mask systemd-binfmt.service
  install -m 0755 "$containerd_dir"/* "$crictl_dir/crictl" "$r/usr/local/bin/"
  if [[ $CONTAINERD_VERSION == v1.* ]]; then
    # kind's node-image build speaks ctr 2: it waits for containerd with
    # `ctr info` (1.x lacks it; `ctr version` asks the same: is the daemon up?)
    # and pins imported images with `images import --label=...pinned=pinned`
    # (1.x lacks the flag; only kubelets from 1.29 honour pinned images).
    mv "$r/usr/local/bin/ctr" "$r/usr/local/bin/ctr.bin"
    cat >"$r/usr/local/bin/ctr" <<'CTR'
#!/bin/sh
# ctr 1.x behind the ctr 2 commands kind uses (see etcdproof's build-base-image.sh).
[ "$1" = info ] && { shift; exec ctr.bin version "$@"; }
for a in "$@"; do
  shift
  case $a in --label=io.cri-containerd.pinned=*) continue ;; esac
  set -- "$@" "$a"
done
exec ctr.bin "$@"
CTR
    chmod 0755 "$r/usr/local/bin/ctr"
    # kind's entrypoint bind-mounts /kubelet and /kubelet.slice onto
    # themselves in every cgroup v1 hierarchy. The runc that kubelet 1.16
    # vendors takes the last mount of a controller as its hierarchy root, so
    # it looks for /kubelet below /kubelet.slice and exits with `cgroup-root
    # ["kubelet"] doesn't exist`. Undo those mounts (the directories stay).
    cat >"$r/usr/local/bin/create-kubelet-cgroup-v1" <<'SH'
#!/bin/sh
[ -f /sys/fs/cgroup/cgroup.controllers ] && exit 0
for m in $(awk '$5 ~ "^/sys/fs/cgroup/.*/kubelet(.slice)?$" {print $5}' /proc/self/mountinfo); do
  umount "$m"
done
exit 0
SH
    chmod 0755 "$r/usr/local/bin/create-kubelet-cgroup-v1"
    printf '[Service]\nExecStartPre=/usr/local/bin/create-kubelet-cgroup-v1\n' \
      >"$r/etc/systemd/system/kubelet.service.d/12-cgroup-v1-root.conf"
  fi
  install -m 0755 "$cni_dir"/* "$r/opt/cni/bin/"
  "$containerd_dir/ctr" oci spec |
    jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
    jq 'del(.process.rlimits)' >"$r/etc/containerd/cri-base.json"
  rm -rf "$r"/var/log/*.log "$r"/tmp/*
}

import_image() {
  local ctx="$ETCDPROOF_CACHE/images/kind-base"
  tar --numeric-owner -C "$work" -c . |
    docker import --change 'ENV container=docker' \
      --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' - "$KIND_BASE_IMAGE-import"
  # Docker 20.10's `import --change` rejects STOPSIGNAL: add it with a build.
  mkdir -p "$ctx"
  printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$KIND_BASE_IMAGE-import" >"$ctx/Dockerfile"
  build_context_image "$KIND_BASE_IMAGE" "$ctx"
  docker rmi "$KIND_BASE_IMAGE-import" >/dev/null
  rm -rf "$work"
}

# assemble_and_import is one step, so that a second run (another era's node,
# which shares this base) waits for the image as a whole: as two steps, it
# assembled the folder again while the first run's import was reading it.
assemble_and_import() {
  if image_exists "$KIND_BASE_IMAGE"; then
    echo "$KIND_BASE_IMAGE was made by another run meanwhile"
    return 0
  fi
  assemble
  import_image
}

build_base() {
  step "debootstrap-$DEBIAN_SUITE" "$rootfs/usr/sbin/runc" debootstrap_rootfs
  step "kind-base-$base_id" "" assemble_and_import
}

if [[ "${1:-}" == rootfs ]]; then
  step "debootstrap-$DEBIAN_SUITE" "$rootfs/usr/sbin/runc" debootstrap_rootfs
  exit 0
fi
if image_exists "$KIND_BASE_IMAGE"; then
  log "== kind-base: cached (image $KIND_BASE_IMAGE)"
else
  build_base
fi
echo "$KIND_BASE_IMAGE"
