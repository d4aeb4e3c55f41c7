# shellcheck shell=bash
# Shared helpers: cache locations, timed steps with logs, clear failures.

set -euo pipefail

ETCDPROOF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Outputs are cached outside the checkout so a fresh clone reuses them.
ETCDPROOF_CACHE=${ETCDPROOF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcdproof}
LOG_DIR=${LOG_DIR:-$ETCDPROOF_CACHE/logs}
mkdir -p "$ETCDPROOF_CACHE" "$LOG_DIR"

# shellcheck source=scripts/lib/versions.sh
source "$ETCDPROOF_ROOT/scripts/lib/versions.sh"

export CGO_ENABLED=0

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# step NAME OUTPUT CMD...: run CMD unless OUTPUT already exists; print the
# step's name and duration; on failure name the step and its log file.
step() {
  local name=$1 output=$2; shift 2
  if [[ -n "$output" && -e "$output" ]]; then
    log "== $name: cached ($output)"
    return 0
  fi
  # Another run on this machine (a second checkout, `make test` beside
  # `make e2e`) may be making the same output: take turns, then look again.
  local lock_fd
  mkdir -p "$ETCDPROOF_CACHE/locks"
  exec {lock_fd}>"$ETCDPROOF_CACHE/locks/$name.lock"
  if ! flock -n "$lock_fd"; then
    log "== $name: waiting for another run that is making it"
    flock "$lock_fd"
  fi
  if [[ -n "$output" && -e "$output" ]]; then
    log "== $name: cached ($output, made by another run)"
    exec {lock_fd}>&-
    return 0
  fi
  local logfile="$LOG_DIR/$name.log" start=$SECONDS rc
  log "== $name: start (log: $logfile)"
  # Not `if ! (...)`: bash ignores errexit inside a tested command, so a
  # failing line in the middle of CMD would go unnoticed.
  set +e
  (
    set -e
    "$@"
  ) >"$logfile" 2>&1
  rc=$?
  set -e
  if ((rc != 0)); then
    tail -n 20 "$logfile" >&2 || true
    die "step '$name' failed (exit $rc) after $((SECONDS - start))s; full log: $logfile"
  fi
  log "== $name: done in $((SECONDS - start))s"
  exec {lock_fd}>&-
}
