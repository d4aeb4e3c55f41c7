#!/usr/bin/env bash
# Build Kubernetes binaries from the Go module proxy.
# usage: build-k8s.sh VERSION CMD...   (CMD: kube-apiserver, kubelet, kubeadm, ...)
# Prints the output folder on stdout.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

version=${1:?usage: build-k8s.sh VERSION CMD...}; shift
(($# > 0)) || die "build-k8s.sh: name at least one command"
out="$ETCDPROOF_CACHE/k8s/$version/bin"
builder="$ETCDPROOF_CACHE/k8s/$version/builder"

# k8s.io/kubernetes is not meant to be a dependency: its go.mod points every
# staging module at ./staging. A builder module replaces each of them with the
# published v0.x.y twin of the same release.
write_builder() {
  local staging minor modfile
  minor=${version#v1.}
  mkdir -p "$builder"
  # `go mod download` honours GOPROXY/GOFLAGS like every other build step.
  modfile=$(cd "$ETCDPROOF_CACHE" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
  staging=$(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile")
  [[ -n "$staging" ]] || die "could not read the staging modules of k8s.io/kubernetes $version"
  {
    echo "module etcdproof.local/k8sbuilder"
    echo "go 1.24"
    echo "require k8s.io/kubernetes $version"
    for m in $staging; do echo "replace $m => $m v0.$minor"; done
  } >"$builder/go.mod"
  printf 'package builder\n' >"$builder/builder.go"
  (cd "$builder" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes && GOFLAGS=-mod=mod go get k8s.io/kubernetes@"$version")
}

build() {
  local ld minor pkgs=()
  minor=${version#v1.}; minor=${minor%%.*}
  ld="-s -w"
  # Without these kubeadm and the kubelet report v0.0.0-master.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld+=" -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  mkdir -p "$out"
  (cd "$builder" && GOFLAGS=-mod=mod go build -trimpath -ldflags="$ld" -o "$out/" "${pkgs[@]}")
}

step "k8s-$version-builder" "$builder/go.sum" write_builder
missing=()
for c in "$@"; do [[ -x "$out/$c" ]] || missing+=("$c"); done
if ((${#missing[@]})); then
  step "k8s-$version-build" "" build "${missing[@]}"
else
  log "== k8s-$version-build: cached ($out: $*)"
fi
echo "$out"
