#!/usr/bin/env bash
# Build the node and cluster tools from the Go module proxy, one cached folder each.
# usage: build-tools.sh NAME...   prints one folder per NAME, in order.
# NAME: kind containerd crictl cni coredns local-path-provisioner kube-router pause
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

(($# > 0)) || die "usage: build-tools.sh NAME... (kind containerd crictl cni coredns local-path-provisioner kube-router pause)"

GOBUILD_FLAGS=(-trimpath -ldflags=-s\ -w)

# go_install DIR PKG@VERSION...: static binaries into DIR.
go_install() {
  local dir=$1; shift
  GOBIN=$dir go install "${GOBUILD_FLAGS[@]}" "$@"
}

# containerd's go.mod has exclude directives, so `go install pkg@v` refuses it;
# a throwaway module that requires it can build it.
build_containerd() {
  local dir=$1 builder="$ETCDPROOF_CACHE/tools/containerd-$CONTAINERD_VERSION-builder"
  local mod=github.com/containerd/containerd/v2 cmds=()
  mkdir -p "$builder"
  cd "$builder" || return
  [[ -f go.mod ]] || go mod init etcdproof.local/containerdbuilder
  for c in containerd ctr containerd-shim-runc-v2; do cmds+=("$mod/cmd/$c"); done
  go get "${cmds[@]/%/@$CONTAINERD_VERSION}"
  go build -trimpath -tags "no_btrfs no_devmapper no_zfs no_aufs" \
    -ldflags="-s -w -X $mod/version.Version=$CONTAINERD_VERSION" -o "$dir/" "${cmds[@]}"
}

build_cni() {
  local dir=$1 p=github.com/containernetworking/plugins/plugins
  go_install "$dir" "$p/main/bridge@$CNI_PLUGINS_VERSION" "$p/main/ptp@$CNI_PLUGINS_VERSION" \
    "$p/main/loopback@$CNI_PLUGINS_VERSION" "$p/ipam/host-local@$CNI_PLUGINS_VERSION" \
    "$p/meta/portmap@$CNI_PLUGINS_VERSION"
}

build_pause() {
  local dir=$1
  cd "$ETCDPROOF_ROOT" || return
  go build "${GOBUILD_FLAGS[@]}" -o "$dir/pause" ./scripts/pause
}

# recipe NAME: prints "VERSION MAIN-BINARY"; runs nothing.
recipe() {
  case $1 in
    kind) echo "$KIND_VERSION kind" ;;
    containerd) echo "$CONTAINERD_VERSION containerd" ;;
    crictl) echo "$CRICTL_VERSION crictl" ;;
    cni) echo "$CNI_PLUGINS_VERSION bridge" ;;
    coredns) echo "$COREDNS_VERSION coredns" ;;
    local-path-provisioner) echo "$LOCAL_PATH_PROVISIONER_VERSION local-path-provisioner" ;;
    kube-router) echo "$KUBE_ROUTER_VERSION kube-router" ;;
    pause) echo "$PAUSE_VERSION pause" ;;
    *) die "build-tools.sh: unknown tool '$1'" ;;
  esac
}

# build NAME DIR: build into DIR.tmp, then rename, so a cached DIR is always complete.
build() {
  local name=$1 dir=$2
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  case $name in
    kind) go_install "$dir.tmp" "sigs.k8s.io/kind@$KIND_VERSION" ;;
    containerd) build_containerd "$dir.tmp" ;;
    crictl) go_install "$dir.tmp" "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" ;;
    cni) build_cni "$dir.tmp" ;;
    coredns) go_install "$dir.tmp" "github.com/coredns/coredns@$COREDNS_VERSION" ;;
    local-path-provisioner) go_install "$dir.tmp" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" ;;
    kube-router) go_install "$dir.tmp" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" ;;
    pause) build_pause "$dir.tmp" ;;
  esac
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
}

for name in "$@"; do
  read -r version main <<<"$(recipe "$name")"
  dir="$ETCDPROOF_CACHE/tools/$name-$version"
  step "tool-$name-$version" "$dir/$main" build "$name" "$dir"
  echo "$dir"
done
