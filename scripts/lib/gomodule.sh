# shellcheck shell=bash
# Build a program of a module served by the Go module proxy as that module's
# own main module: its go.mod's replace directives apply, which
# `go install pkg@version` refuses and a module requiring it ignores.
# Dependencies come from the proxy, pinned by its go.sum: the proxy's copy of
# a module has no vendored code (-mod=mod, whatever the copy's vendor folder says).

# module_source MODULE@VERSION: prints the module's folder in the module
# cache, downloaded first when needed. Run from an empty folder: no go.mod of
# ours is read or touched.
module_source() {
  local tmp dir
  tmp=$(mktemp -d)
  dir=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1" | jq -r .Dir)
  rmdir "$tmp"
  [[ -d "$dir" ]] || die "go mod download $1 gave no source folder"
  echo "$dir"
}

# build_module_program MODULE VERSION PACKAGE OUT: go build PACKAGE (relative
# to the module's root, e.g. ./cmd/registry) into OUT, from a writable copy
# of the module's source (the module cache is read-only).
build_module_program() {
  local module=$1 version=$2 package=$3 out=$4 dir src
  mkdir -p "$(dirname "$out")"
  dir=$(module_source "$module@$version")
  src=$(mktemp -d "$(dirname "$out")/src.XXXXXX")
  cp -a "$dir/." "$src/"
  chmod -R u+w "$src"
  (cd "$src" && GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "$out.tmp" "$package")
  rm -rf "$src"
}
