#!/usr/bin/env bash
# Build the CNCF Distribution registry (`registry`) from the Go module proxy:
# the registry mirror of every cluster (scripts/lib/mirror.sh).
# usage: build-registry.sh    prints the path of the binary.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"

registry="$ETCDPROOF_CACHE/registry/$REGISTRY_VERSION/registry"

build() {
  build_module_program github.com/distribution/distribution/v3 "$REGISTRY_VERSION" ./cmd/registry "$registry"
  "$registry.tmp" --version
  mv "$registry.tmp" "$registry"
}

step "registry-$REGISTRY_VERSION" "$registry" build
echo "$registry"
