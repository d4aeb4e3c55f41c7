#!/usr/bin/env bash
# Build etcd and etcdctl of one release from the Go module proxy.
# usage: build-etcd.sh VERSION    prints the folder holding etcd and etcdctl.
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
      go get "go.etcd.io/etcd/server/v3@$version" "go.etcd.io/etcd/etcdctl/v3@$version"
      go build -trimpath -ldflags="-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3
      go build -trimpath -ldflags="-s -w" -o "$out/etcdctl" go.etcd.io/etcd/etcdctl/v3
      ;;
    v3.4.*)
      local pseudo_var=ETCD_PSEUDO_VERSION_${version//./_}
      [[ -n "${!pseudo_var:-}" ]] || die "build-etcd.sh: etcd $version needs $pseudo_var (a release-commit pseudo-version) in versions.sh"
      go get "go.etcd.io/etcd@${!pseudo_var}" "go.etcd.io/etcd/etcdctl@${!pseudo_var}"
      go build -trimpath -ldflags="-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd
      go build -trimpath -ldflags="-s -w" -o "$out/etcdctl" go.etcd.io/etcd/etcdctl
      ;;
    *) die "build-etcd.sh: no recipe for etcd $version" ;;
  esac
  mv "$out/etcd.tmp" "$out/etcd"
}

step "etcd-$version" "$out/etcd" build
echo "$out"
