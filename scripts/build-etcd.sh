#!/usr/bin/env bash
# Build etcd, etcdctl and (3.5 and later) etcdutl of one release from the Go
# module proxy.
# usage: build-etcd.sh VERSION    prints the folder holding the binaries.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

version=${1:?usage: build-etcd.sh VERSION}
out="$ETCDPROOF_CACHE/etcd/$version"
builder="$ETCDPROOF_CACHE/etcd/$version-builder"

# The etcd server module carries replace directives, so `go install pkg@v`
# refuses it; a throwaway module that requires it builds it instead.
build() {
  mkdir -p "$builder" "$out"
  cd "$builder" || return
  [[ -f go.mod ]] || go mod init etcdproof.local/etcdbuilder
  case "$version" in
    v3.5.* | v3.6.* | v3.7.*)
      go get "go.etcd.io/etcd/server/v3@$version" "go.etcd.io/etcd/etcdctl/v3@$version" "go.etcd.io/etcd/etcdutl/v3@$version"
      go build -trimpath -ldflags="-s -w" -o "$out/etcdctl" go.etcd.io/etcd/etcdctl/v3
      go build -trimpath -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
      go build -trimpath -ldflags="-s -w" -o "$out/etcdutl.tmp" go.etcd.io/etcd/etcdutl/v3
      mv "$out/etcdutl.tmp" "$out/etcdutl"
      ;;
    v3.4.*)
      local pseudo_var=ETCD_PSEUDO_VERSION_${version//./_}
      [[ -n "${!pseudo_var:-}" ]] || die "build-etcd.sh: etcd $version needs $pseudo_var (a release-commit pseudo-version) in versions.sh"
      go get "go.etcd.io/etcd@${!pseudo_var}" "go.etcd.io/etcd/etcdctl@${!pseudo_var}"
      go build -trimpath -ldflags="-s -w" -o "$out/etcdctl" go.etcd.io/etcd/etcdctl
      go build -trimpath -ldflags="-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd
      mv "$out/etcd.tmp" "$out/etcd"
      ;;
    *) die "build-etcd.sh: no recipe for etcd $version" ;;
  esac
}

# The binary built last marks a complete build (etcdutl exists from 3.5 on).
case "$version" in
  v3.4.*) done_marker="$out/etcd" ;;
  *) done_marker="$out/etcdutl" ;;
esac
step "etcd-$version" "$done_marker" build
echo "$out"
