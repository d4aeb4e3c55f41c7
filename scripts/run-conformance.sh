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

# etcdproof itself leaves out the checks the cluster has too few nodes for
# (node-loss, drain and drain-during-rollout need a worker per member) unless
# the label filter names them, so this script passes the filter as given.
exec "$ETCDPROOF_ROOT/bin/etcdproof" "$command" "${flags[@]}" "$@"
