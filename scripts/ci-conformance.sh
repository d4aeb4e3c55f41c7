#!/usr/bin/env bash
# What the reusable GitHub action runs; usable from any CI system.
# env: PROFILE (file or built-in name), OPERATOR_IMAGES, K8S_VERSION, LABEL_FILTER, REPORT_DIR
# Writes result=pass|fail|error and summary=<path> to $GITHUB_OUTPUT when set, and the
# Markdown summary to $GITHUB_STEP_SUMMARY.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

: "${PROFILE:?set PROFILE to a profile file or a built-in profile name}"
report_dir=$(mkdir -p "${REPORT_DIR:-etcdproof-report}" && cd "${REPORT_DIR:-etcdproof-report}" && pwd)
profile=$PROFILE
[[ -f $profile ]] && profile=$(cd "$(dirname "$profile")" && pwd)/$(basename "$profile")

cd "$ETCDPROOF_ROOT"
# The images the profile's run needs (a file, by its absolute path: make runs here).
make e2e-substrate IMAGES_FOR="$profile"
if [[ -n ${OPERATOR_IMAGES:-} ]]; then
  # shellcheck disable=SC2086 # a space-separated list of images
  bin/etcdproof cluster load --name "$(scripts/cluster-env.sh ETCDPROOF_CLUSTER)" $OPERATOR_IMAGES
fi

rc=0
# Not through make: make turns every failure into exit code 2.
scripts/run-conformance.sh run --profile "$profile" --report-dir "$report_dir" \
  ${LABEL_FILTER:+--label-filter "$LABEL_FILTER"} || rc=$?
case $rc in 0) result=pass ;; 1) result=fail ;; *) result=error ;; esac
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  echo "result=$result" >>"$GITHUB_OUTPUT"
  echo "summary=$report_dir/report.md" >>"$GITHUB_OUTPUT"
fi
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $report_dir/report.md ]]; then
  cat "$report_dir/report.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$rc"
