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
OPENAPI_PKG=pkg/generated/openapi

# kubernetes_module: prints "GOMOD-FILE MODULE-DIR" of k8s.io/kubernetes@$version.
kubernetes_module() {
  # `go mod download` honours GOPROXY/GOFLAGS like every other build step.
  (cd "$ETCDPROOF_CACHE" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version") |
    jq -r '"\(.GoMod) \(.Dir)"'
}

# pinned_replaces GOMOD: kubernetes' own non-staging replace directives, one
# "MODULE TARGET VERSION" a line. Old releases (1.16 among them) pin every
# dependency this way; a builder must repeat the pins, since replace directives
# only count in the main module. Current releases have none.
pinned_replaces() {
  sed -n -e '/^replace (/,/^)/{s#//.*##;s#^\s*\(\S\+\) => \([^.]\S*\) \(\S\+\)\s*$#\1 \2 \3#p}' \
    -e 's#^replace \(\S\+\) => \([^.]\S*\) \(\S\+\)\s*$#\1 \2 \3#p' "$1"
}

# k8s.io/kubernetes is not meant to be a dependency: its go.mod points every
# staging module at ./staging. A builder module replaces each of them with the
# published v0.x.y twin of the same release.
write_builder() {
  local staging minor modfile moddir m target v
  minor=${version#v1.}
  read -r modfile moddir <<<"$(kubernetes_module)"
  if [[ -f "$moddir/Godeps/Godeps.json" ]]; then
    write_godeps_builder "$moddir"
    return
  fi
  staging=$(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile")
  [[ -n "$staging" ]] || die "could not read the staging modules of k8s.io/kubernetes $version"
  mkdir -p "$builder"
  # Old releases (1.16 among them) did not commit the generated OpenAPI
  # definitions, their build made them: build from a writable copy that gets them.
  if [[ ! -f "$moddir/$OPENAPI_PKG/zz_generated.openapi.go" ]]; then
    rm -rf "$builder/kubernetes-src"
    cp -r "$moddir" "$builder/kubernetes-src"
    chmod -R u+w "$builder/kubernetes-src"
  fi
  {
    echo "module etcdproof.local/k8sbuilder"
    echo "go 1.24"
    echo "require k8s.io/kubernetes $version"
    for m in $staging; do echo "replace $m => $m v0.$minor"; done
    while read -r m target v; do
      # vbom.ml no longer serves its module; the same code lives on at GitHub.
      [[ "$target" == vbom.ml/util ]] && target=github.com/fvbommel/util
      # reflect2 before v1.0.2 iterates maps through runtime internals that
      # Go 1.18 changed: built with our Go, the 1.16 API server panics in
      # json-iterator encoding any map. v1.0.2 is the API-compatible fix.
      [[ "$m" == github.com/modern-go/reflect2 && "$v" == v1.0.1 ]] && v=v1.0.2
      echo "replace $m => $target $v"
    done < <(pinned_replaces "$modfile")
    if [[ -d "$builder/kubernetes-src" ]]; then echo "replace k8s.io/kubernetes => ./kubernetes-src"; fi
  } >"$builder/go.mod"
  printf 'package builder\n' >"$builder/builder.go"
  (cd "$builder" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes && GOFLAGS=-mod=mod go get k8s.io/kubernetes@"$version")
}

# write_godeps_builder MODULE-DIR: releases before 1.15 have no go.mod. Their
# pins are commits in Godeps/Godeps.json, their staging modules only folders of
# their tree: scripts/godeps2gomod turns both into the builder's go.mod, with
# the staging modules (and k8s.io/kubernetes) replaced by a writable copy.
write_godeps_builder() {
  mkdir -p "$builder"
  rm -rf "$builder/kubernetes-src"
  (cd "$ETCDPROOF_ROOT" && go build -o "$builder/godeps2gomod" ./scripts/godeps2gomod)
  "$builder/godeps2gomod" -godeps "$1/Godeps/Godeps.json" -version "$version" -moddir "$1" -builder "$builder"
  printf 'package builder\n' >"$builder/builder.go"
  (cd "$builder" && GOFLAGS=-mod=mod go list -m all >/dev/null) # writes go.sum
}

# openapi_dirs DIR PREFIX: import paths of the packages under DIR that ask for
# OpenAPI definitions. Like upstream: a Go file with a `// +k8s:` comment tag
# that mentions +k8s:openapi-gen (=true on the package or =false on a type).
openapi_dirs() {
  (cd "$1" && grep -rl --include='*.go' '^// *+k8s:' . | grep -v '/testdata/\|_test\.go$' |
    xargs -r grep -l '+k8s:openapi-gen=' | xargs -r -n1 dirname | LC_ALL=C sort -u |
    sed "s#^\.#$2#")
}

# generate_openapi: what kubernetes' build/root/Makefile.generated_files does
# for its KUBE target, with openapi-gen from the kube-openapi kubernetes pins.
generate_openapi() {
  local src="$builder/kubernetes-src" gen="$builder/openapi-gen" tmp dirs=() m mdir staging staging_dirs required report=()
  tmp=$(mktemp -d)
  (cd "$builder" && GOFLAGS=-mod=mod go build -o "$gen" k8s.io/kube-openapi/cmd/openapi-gen)
  mapfile -t dirs < <(openapi_dirs "$src" k8s.io/kubernetes | grep -v '^k8s.io/kubernetes/\(staging\|vendor\|test\)/')
  # The staging modules, but code-generator and sample-apiserver (as upstream).
  # Only those the build needs: `go mod download` fails on a replaced module
  # nothing requires (1.16's node-api, sample-controller...).
  required=$(cd "$builder" && GOFLAGS=-mod=mod go list -m -f '{{.Path}}' all)
  staging=$(sed -n "s#^replace \(k8s.io/[a-z0-9-]*\) => \1 v0\.${version#v1.}\$#\1#p" "$builder/go.mod" |
    grep -vx 'k8s.io/code-generator\|k8s.io/sample-apiserver' | grep -Fx -f <(echo "$required") || true)
  # Before 1.15 the staging modules are folders of kubernetes-src.
  staging_dirs=$(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => \./\(kubernetes-src/staging/\S*\)$#\1 '"$builder"'/\2#p' "$builder/go.mod")
  if [[ -n "$staging" ]]; then
    # shellcheck disable=SC2086 # one argument per module
    staging_dirs+=$'\n'$(cd "$builder" && GOFLAGS=-mod=mod go mod download -json $staging |
      jq -r 'select(.Dir) | "\(.Path) \(.Dir)"')
  fi
  while read -r m mdir; do
    if [[ -n "$m" ]]; then mapfile -t -O "${#dirs[@]}" dirs < <(openapi_dirs "$mdir" "$m"); fi
  done <<<"$staging_dirs"
  ((${#dirs[@]} > 50)) || die "found only ${#dirs[@]} +k8s:openapi-gen packages: ${dirs[*]}"
  log "openapi-gen over ${#dirs[@]} packages: ${dirs[*]}"
  # The API-rule violation report only matters to upstream reviews: keep it beside the log.
  # gotypesalias=0: this gengo predates types.Alias; without it, it warns
  # "unsupported type" on meta/v1beta1's aliases of meta/v1 (Table, TableRow...).
  # The openapi-gen of 1.11 has no report.
  if [[ "$("$gen" --help 2>&1 || true)" == *--report-filename* ]]; then report=(-r "$builder/openapi-violations.report"); fi
  (cd "$builder" && GOFLAGS=-mod=mod GODEBUG=gotypesalias=0 "$gen" --logtostderr \
    -i "$(IFS=,; echo "${dirs[*]}")" -p "k8s.io/kubernetes/$OPENAPI_PKG" -O zz_generated.openapi \
    -h "$src/hack/boilerplate/boilerplate.generatego.txt" "${report[@]}" -o "$tmp")
  cp "$tmp/k8s.io/kubernetes/$OPENAPI_PKG/zz_generated.openapi.go" "$src/$OPENAPI_PKG/"
  rm -rf "$tmp"
}

build() {
  local ld minor pkgs=()
  minor=${version#v1.}; minor=${minor%%.*}
  ld="-s -w"
  # Without these kubeadm and the kubelet report v0.0.0-master. Until about 1.17
  # the version lived in k8s.io/kubernetes/pkg/version (and kubectl's own);
  # the linker ignores -X for a package a release does not have.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version k8s.io/kubernetes/pkg/version k8s.io/kubectl/pkg/version; do
    ld+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld+=" -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  mkdir -p "$out"
  for c in "$@"; do
    # The 1.16 kubelet's cadvisor links NVIDIA's NVML through cgo
    # (github.com/mindprince/gonvml has no pure-Go files); upstream built that
    # kubelet with cgo too, and it runs on the node's glibc. (Measured on 1.16;
    # the bound assumes cadvisor dropped that import by 1.19.)
    if [[ $c == kubelet ]] && ((minor < 19)); then
      (cd "$builder" && CGO_ENABLED=1 GOFLAGS=-mod=mod go build -trimpath -ldflags="$ld" -o "$out/" "k8s.io/kubernetes/cmd/$c")
    else
      pkgs+=("k8s.io/kubernetes/cmd/$c")
    fi
  done
  if ((${#pkgs[@]})); then
    (cd "$builder" && GOFLAGS=-mod=mod go build -trimpath -ldflags="$ld" -o "$out/" "${pkgs[@]}")
  fi
}

step "k8s-$version-builder" "$builder/go.sum" write_builder
if [[ -d "$builder/kubernetes-src" ]]; then
  step "k8s-$version-openapi" "$builder/kubernetes-src/$OPENAPI_PKG/zz_generated.openapi.go" generate_openapi
fi
missing=()
for c in "$@"; do [[ -x "$out/$c" ]] || missing+=("$c"); done
if ((${#missing[@]})); then
  step "k8s-$version-build" "" build "${missing[@]}"
else
  log "== k8s-$version-build: cached ($out: $*)"
fi
echo "$out"
