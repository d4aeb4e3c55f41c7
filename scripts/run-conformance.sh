#!/usr/bin/env bash
# Run bin/etcdproof against the substrate's cluster, wiring in where the
# cluster is (kubeconfig, context, kind, kubectl, audit log). Keeps etcdproof's
# exit code: 0 pass, 1 fail, 2 incomplete or could not run.
# usage: run-conformance.sh run|selftest|bench [etcdproof flags...]
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

command=${1:?usage: run-conformance.sh run|selftest|bench [flags...]}; shift
env_of() { "$ETCDPROOF_ROOT/scripts/cluster-env.sh" "$1"; }

flags=(--kubeconfig "$(env_of KUBECONFIG)" --context "$(env_of KUBE_CONTEXT)"
  --kubectl "$(env_of KUBECTL)"
  --traffic-image "${ETCDPROOF_IMAGE:-etcdproof/etcdproof:dev}")
# The rbac check reads the API server's audit log. The path is always passed,
# readable or not: etcdproof reports an unreadable log as rbac INCOMPLETE
# (with the path and the error) instead of the check silently not running.
flags+=(--audit-log "$(env_of ETCDPROOF_AUDIT_LOG)")

# node-loss and drain need a worker node per member, which only the 3workers
# topology has (make e2e-nodes). Everywhere else (make e2e, make results,
# make e2e-selftest, CI) they are left out of a run without a label filter,
# and of a filter that does not name them (LABEL_FILTER=faults), so they are
# reported as not selected and not required, never as INCOMPLETE. A filter
# that names them keeps them: the run then says why they cannot run here.
args=("$@")
if [[ ($command == run || $command == selftest) && ${KIND_TOPOLOGY:-} != 3workers ]]; then
  one_node='!node-loss && !drain && !drain-during-rollout'
  filter_at=-1
  for i in "${!args[@]}"; do
    [[ ${args[$i]} == --label-filter ]] && filter_at=$((i + 1))
  done
  if ((filter_at < 0)); then
    log "== no --label-filter on a one-node cluster: leaving out node-loss, drain and drain-during-rollout (run them with make e2e-nodes)"
    flags+=(--label-filter "$one_node")
  elif [[ ${args[$filter_at]} != *node-loss* && ${args[$filter_at]} != *drain* ]]; then
    log "== one-node cluster: leaving node-loss, drain and drain-during-rollout out of --label-filter '${args[$filter_at]}' (run them with make e2e-nodes)"
    args[filter_at]="(${args[$filter_at]}) && $one_node"
  fi
fi

exec "$ETCDPROOF_ROOT/bin/etcdproof" "$command" "${flags[@]}" "${args[@]}"
