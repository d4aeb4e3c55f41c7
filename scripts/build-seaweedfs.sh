#!/usr/bin/env bash
# Build SeaweedFS's `weed` (master, volume server, filer and S3 gateway in one
# binary) from the Go module proxy: the S3 object store of the backup and
# restore tests (versions.sh says why SeaweedFS).
# usage: build-seaweedfs.sh    prints the path of the binary.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

module=github.com/seaweedfs/seaweedfs
out="$ETCDPROOF_CACHE/seaweedfs/$SEAWEEDFS_VERSION"
weed="$out/weed"

# Its go.mod has a replace directive, which `go install pkg@version` refuses
# and a module that requires it would ignore: it is built as the main module,
# from a writable copy of the module's source (the module cache is read-only).
build() {
  local tmp dir src
  mkdir -p "$out"
  # From an empty folder: no go.mod of ours is read or touched.
  tmp=$(mktemp -d)
  dir=$(cd "$tmp" && go mod download -json "$module@$SEAWEEDFS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rmdir "$tmp"
  [[ -f "$dir/go.mod" ]] || die "go mod download $module@$SEAWEEDFS_VERSION gave no source folder"
  src=$(mktemp -d "$out/src.XXXXXX")
  cp -a "$dir/." "$src/"
  chmod -R u+w "$src"
  (cd "$src" && go build -trimpath -ldflags="-s -w" -o "$weed.tmp" ./weed)
  rm -rf "$src"
  "$weed.tmp" version
  mv "$weed.tmp" "$weed"
}

step "seaweedfs-$SEAWEEDFS_VERSION" "$weed" build
echo "$weed"
