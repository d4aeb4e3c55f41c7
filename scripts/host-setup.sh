#!/usr/bin/env bash
# Prepare this host for kind: packages, a running Docker daemon, and — only
# where a probe shows privileged containers fail — the runc wrapper that drops
# CAP_SYS_RESOURCE. Docker is left untouched on hosts where it works.
# usage: host-setup.sh      (idempotent; safe to run on every `make cluster`)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"

HOST_PACKAGES=(docker.io jq debootstrap pigz)
SHIM_PATH=/usr/local/sbin/runc-drop-sys-resource
SHIM_RUNTIME=runc-drop-sys-resource
DAEMON_JSON=/etc/docker/daemon.json
DOCKERD_LOG="$LOG_DIR/dockerd.log"

install_packages() {
  local missing=()
  for p in "${HOST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) == 0 ]] || die "missing packages ${missing[*]}; run as root or install them"
  log "installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

docker_ready() { docker info >/dev/null 2>&1; }

wait_for_docker() {
  local deadline=$((SECONDS + 60))
  until docker_ready; do
    ((SECONDS < deadline)) || die "dockerd did not answer within 60s; see $DOCKERD_LOG"
    sleep 1
  done
}

# No systemd on some hosts: start dockerd by hand, detached, logging to a file.
start_dockerd() {
  docker_ready && return 0
  command -v dockerd >/dev/null || die "dockerd not found after installing docker.io"
  log "starting dockerd (log: $DOCKERD_LOG)"
  setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
  wait_for_docker
}

# privileged_works: kind needs both a privileged run and a privileged exec.
privileged_works() {
  local id ok=0
  docker run --rm --privileged "$BUSYBOX_IMAGE" true >/dev/null 2>&1 || return 1
  id=$(docker run -d "$BUSYBOX_IMAGE" sleep 60) || return 1
  docker exec --privileged "$id" true >/dev/null 2>&1 || ok=1
  docker rm -f "$id" >/dev/null 2>&1 || true
  return "$ok"
}

install_shim() {
  local real_runc tmp
  real_runc=$(command -v runc) || die "runc not found"
  sed "s#@REAL_RUNC@#$real_runc#" "$ETCDPROOF_ROOT/scripts/host/runc-drop-sys-resource.sh" >"$SHIM_PATH.tmp"
  chmod 0755 "$SHIM_PATH.tmp"
  mv "$SHIM_PATH.tmp" "$SHIM_PATH"
  mkdir -p "$(dirname "$DAEMON_JSON")"
  [[ -s "$DAEMON_JSON" ]] || echo '{}' >"$DAEMON_JSON"
  tmp=$(mktemp)
  jq --arg name "$SHIM_RUNTIME" --arg path "$SHIM_PATH" \
    '.runtimes[$name] = {path: $path} | ."default-runtime" = $name' "$DAEMON_JSON" >"$tmp"
  install -m 0644 "$tmp" "$DAEMON_JSON"
  rm -f "$tmp"
  # dockerd reloads runtimes and default-runtime on SIGHUP; no restart needed.
  kill -HUP "$(cat /var/run/docker.pid)"
  wait_for_docker
}

configure_runtime() {
  if privileged_works; then
    log "privileged containers work; Docker left as it is"
    return 0
  fi
  log "privileged run/exec fails here (no CAP_SYS_RESOURCE?): installing $SHIM_PATH as Docker's default runtime"
  install_shim
  local deadline=$((SECONDS + 20))
  until privileged_works; do
    ((SECONDS < deadline)) || die "privileged containers still fail with the runc wrapper; see $DOCKERD_LOG"
    sleep 1
  done
  log "privileged run/exec works with the runc wrapper"
}

step host-packages "" install_packages
start_dockerd
step busybox-image "" ensure_busybox_image
step docker-runtime "" configure_runtime
