#!/usr/bin/env bash
# Run each profile of RESULTS_PROFILES once on the substrate's cluster, keep
# its report under RESULTS_DIR/<kubernetes version>/<profile>, then render
# docs/results.md and docs/results.html (the same matrix, with the timings
# compared as bar charts) from every report there (all Kubernetes versions
# run so far).
# RESULTS_RUN=nodes runs only the node checks (node-loss, drain: the 3-worker
# cluster of make results-nodes) and keeps them under
# RESULTS_DIR/nodes/<kubernetes version>/<profile>; the matrix shows both runs
# of a profile in one column.
# Each run's report.json, less its per-check event lists (the matrix does not
# show them), is also kept in docs/results/runs/[nodes/]<Kubernetes
# version>/<profile>/ (RESULTS_ARCHIVE), committed with the matrix: the
# matrix is rendered from there, so a run of one profile on one version
# replaces that column and keeps every other, on any machine.
# A profile whose checks fail is a result; one that could not run stops here.
# usage: results.sh      env: RESULTS_PROFILES, RESULTS_DIR, RESULTS_RUN, K8S_VERSION, RESULTS_ARCHIVE
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

profiles=${RESULTS_PROFILES:-reference coreos-v0.9.4}
results_dir=${RESULTS_DIR:-$ETCDPROOF_ROOT/_report/results}
kube=${K8S_VERSION:-current}
archive=${RESULTS_ARCHIVE:-$ETCDPROOF_ROOT/docs/results/runs}
runs_dir=$results_dir
archive_dir=$archive
filter=()
if [[ ${RESULTS_RUN:-} == nodes ]]; then
  runs_dir=$results_dir/nodes
  archive_dir=$archive/nodes
  filter=(--label-filter 'node-loss || drain || drain-during-rollout')
fi

# keep_run REPORT PROFILE: archive a run's report under the Kubernetes version
# it ran on (the report says which), replacing that profile's earlier run there.
# The files the report names (histories, visualizations) stay behind: they are
# named relative to the run's report folder, which is this machine's.
keep_run() {
  local kube_version dest
  kube_version=$(jq -r '.environment.kubernetes // empty' "$1")
  [[ -n "$kube_version" ]] || die "$1 names no Kubernetes version"
  dest="$archive_dir/$kube_version/$2"
  mkdir -p "$dest"
  jq --arg dir "$(cd "$(dirname "$1")" && pwd)/" \
    'del(.checks[]?.events) | walk(if type == "string" then split($dir) | join("") else . end)' \
    "$1" >"$dest/report.json.tmp"
  mv "$dest/report.json.tmp" "$dest/report.json"
  log "== results: kept in ${dest#"$ETCDPROOF_ROOT"/}"
}

for p in $profiles; do
  dir="$runs_dir/$kube/$p"
  rm -rf "$dir"
  log "== results: $p on Kubernetes $kube (report: $dir)"
  rc=0
  "$ETCDPROOF_ROOT/scripts/run-conformance.sh" run --profile "$p" --report-dir "$dir" "${filter[@]}" || rc=$?
  case $rc in
    0) log "== results: $p passed" ;;
    1) log "== results: $p failed checks (recorded)" ;;
    2) [[ -f $dir/report.json ]] || die "profile $p could not run (exit 2); see the output above"
      log "== results: $p incomplete (recorded)" ;;
    *) die "profile $p could not run (exit $rc); see the output above" ;;
  esac
  keep_run "$dir/report.json" "$p"
done
"$ETCDPROOF_ROOT/bin/etcdproof" results -o "$ETCDPROOF_ROOT/docs/results.md" --html "$ETCDPROOF_ROOT/docs/results.html" "$archive"
