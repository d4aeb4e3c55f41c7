#!/usr/bin/env bash
# Install a host tool from Debian's packages when it is missing.
# usage: ensure-tool.sh COMMAND [PACKAGE]
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

cmd=${1:?usage: ensure-tool.sh COMMAND [PACKAGE]}
pkg=${2:-$cmd}
if ! command -v "$cmd" >/dev/null; then
  log "installing $pkg (apt)"
  apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null || die "could not install $pkg"
fi
command -v "$cmd"
