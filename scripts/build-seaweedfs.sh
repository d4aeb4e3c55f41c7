#!/usr/bin/env bash
# Build SeaweedFS's `weed` (master, volume server, filer and S3 gateway in one
# binary) from the Go module proxy: the S3 object store of the backup and
# restore tests (versions.sh says why SeaweedFS).
# usage: build-seaweedfs.sh    prints the path of the binary.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"

weed="$ETCDPROOF_CACHE/seaweedfs/$SEAWEEDFS_VERSION/weed"

# Its go.mod has a replace directive: built as the main module.
build() {
  build_module_program github.com/seaweedfs/seaweedfs "$SEAWEEDFS_VERSION" ./weed "$weed"
  "$weed.tmp" version
  mv "$weed.tmp" "$weed"
}

step "seaweedfs-$SEAWEEDFS_VERSION" "$weed" build
echo "$weed"
