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

# builder_build NAME DIR MODULE VERSION LDFLAGS TAGS PKG...: build MODULE@VERSION's PKGs
# in a throwaway module that requires it. `go install pkg@v` refuses a module
# whose go.mod has replace or exclude directives; replace directives only count
# in the main module, so the builder repeats MODULE's own. EXTRA_REPLACES (words
# MODULE=TARGET@VERSION) adds more.
builder_build() {
  local name=$1 dir=$2 mod=$3 version=$4 ldflags=$5 tags=$6; shift 6
  local builder="$ETCDPROOF_CACHE/tools/$name-$version-builder" gomod m target v pkgs=()
  mkdir -p "$builder"
  cd "$builder" || return
  [[ -f go.mod ]] || go mod init "etcdproof.local/${name}builder"
  gomod=$(GOFLAGS=-mod=mod go mod download -json "$mod@$version" | jq -r .GoMod)
  while read -r m target v; do
    go mod edit -replace="$m=$target@$v"
  done < <(sed -n -e '/^replace (/,/^)/{s#//.*##;s#^\s*\(\S\+\) => \([^.]\S*\) \(\S\+\)\s*$#\1 \2 \3#p}' \
    -e 's#^replace \(\S\+\) => \([^.]\S*\) \(\S\+\)\s*$#\1 \2 \3#p' "$gomod")
  for m in ${EXTRA_REPLACES:-}; do go mod edit -replace="$m"; done
  # PKG is a path inside MODULE: "" for its root, /cmd/x for a command.
  for m in "$@"; do pkgs+=("$mod$m"); done
  go get "${pkgs[@]/%/@$version}"
  # reflect2 before v1.0.2 walks maps through Go runtime internals that Go 1.18
  # changed: json-iterator then panics encoding maps (old coredns pins v1.0.1).
  if [[ $(go list -m -f '{{.Version}}' github.com/modern-go/reflect2 2>/dev/null) == v1.0.[01] ]]; then
    go get github.com/modern-go/reflect2@v1.0.2
  fi
  go build -trimpath -tags "$tags" -ldflags="-s -w $ldflags" -o "$dir/" "${pkgs[@]}"
}

# containerd's go.mod has exclude directives, so `go install pkg@v` refuses it.
build_containerd() {
  local mod=github.com/containerd/containerd
  # containerd 2 moved to a /v2 module.
  [[ $CONTAINERD_VERSION == v1.* ]] || mod+=/v2
  builder_build containerd "$1" "$mod" "$CONTAINERD_VERSION" "-X $mod/version.Version=$CONTAINERD_VERSION" \
    "no_btrfs no_devmapper no_zfs no_aufs" /cmd/containerd /cmd/ctr /cmd/containerd-shim-runc-v2
}

build_coredns() {
  case $COREDNS_VERSION in
    # coredns 1.6 has replace directives: build it like containerd.
    # Its opencensus-proto pseudo-version is gone from the proxy (403): take the
    # next release of that (generated protobuf) module.
    v1.6.*)
      EXTRA_REPLACES=github.com/census-instrumentation/opencensus-proto=github.com/census-instrumentation/opencensus-proto@v0.2.1 \
        builder_build coredns "$1" github.com/coredns/coredns "$COREDNS_VERSION" "" "" ""
      ;;
    *) go_install "$1" "github.com/coredns/coredns@$COREDNS_VERSION" ;;
  esac
}

build_kube_router() {
  case $KUBE_ROUTER_VERSION in
    # Before 2.0 kube-router was not a /v2 module. The proxy refuses to list
    # that module's versions, and `go install pkg@v` asks for the list (to warn
    # of deprecation): build it in a module, where `go get` does without.
    v1.*) builder_build kube-router "$1" github.com/cloudnativelabs/kube-router "$KUBE_ROUTER_VERSION" "" "" /cmd/kube-router ;;
    *) go_install "$1" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" ;;
  esac
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
    coredns) build_coredns "$dir.tmp" ;;
    local-path-provisioner) go_install "$dir.tmp" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" ;;
    kube-router) build_kube_router "$dir.tmp" ;;
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
