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
# A profile whose checks fail is a result; one that could not run stops here.
# usage: results.sh      env: RESULTS_PROFILES, RESULTS_DIR, RESULTS_RUN, K8S_VERSION
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

profiles=${RESULTS_PROFILES:-reference coreos-v0.9.4}
results_dir=${RESULTS_DIR:-$ETCDPROOF_ROOT/_report/results}
kube=${K8S_VERSION:-current}
runs_dir=$results_dir
filter=()
if [[ ${RESULTS_RUN:-} == nodes ]]; then
  runs_dir=$results_dir/nodes
  filter=(--label-filter 'node-loss || drain')
fi

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
done
"$ETCDPROOF_ROOT/bin/etcdproof" results -o "$ETCDPROOF_ROOT/docs/results.md" --html "$ETCDPROOF_ROOT/docs/results.html" "$results_dir"
