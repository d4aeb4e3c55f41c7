#!/usr/bin/env bash
# A runc wrapper for hosts whose capability bounding set lacks CAP_SYS_RESOURCE
# (some VMs): `docker run --privileged` and `docker exec --privileged` ask runc
# for every capability and fail with "unable to apply caps". This wrapper
# removes CAP_SYS_RESOURCE from the container spec (create/run: the bundle's
# config.json) and from the process spec (exec: --process FILE), then runs the
# real runc. host-setup.sh installs it only where a probe shows the failure.
set -euo pipefail

REAL_RUNC=${REAL_RUNC:-@REAL_RUNC@}

drop_cap() { # drop_cap FILE JQ-PATH
  local file=$1 path=$2
  [[ -f "$file" ]] || return 0
  jq "if $path then $path |= with_entries(.value |= map(select(. != \"CAP_SYS_RESOURCE\"))) else . end" \
    "$file" >"$file.tmp"
  mv "$file.tmp" "$file"
}

bundle="" process=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --bundle | -b) bundle=${args[i + 1]:-} ;;
    --bundle=*) bundle=${args[i]#--bundle=} ;;
    --process | -p) process=${args[i + 1]:-} ;;
    --process=*) process=${args[i]#--process=} ;;
  esac
done
[[ -z "$bundle" ]] || drop_cap "$bundle/config.json" .process.capabilities
[[ -z "$process" ]] || drop_cap "$process" .capabilities
exec "$REAL_RUNC" "$@"
