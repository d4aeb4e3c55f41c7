#!/usr/bin/env bash
# Control-plane binaries for envtest (kube-apiserver + etcd), and SeaweedFS's
# weed for the backup tests, built from source and cached; Debian's chromium
# for the browser test of report.html. Prints the folder to use as
# KUBEBUILDER_ASSETS (and nothing else on stdout).
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

k8s_version=${1:-$K8S_CURRENT}
assets="$ETCDPROOF_CACHE/envtest/$k8s_version"
# An old API server gets the etcd its era's nodes run (versions.sh node_pins).
etcd_version=$ETCD_CONTROL_PLANE_VERSION
if declare -F node_pins >/dev/null; then
  node_pins "$k8s_version"
  etcd_version=${NODE_ETCD_VERSION:-$etcd_version}
fi
k8s_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$k8s_version" kube-apiserver)
# envtest only needs kubectl for its own helpers: the current one serves every era.
kubectl_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$K8S_CURRENT" kubectl)
etcd_bin=$("$ETCDPROOF_ROOT/scripts/build-etcd.sh" "$etcd_version")
# The S3 object store of the backup tests: `make test` hands its path to the
# tests as ETCDPROOF_WEED (scripts/build-seaweedfs.sh prints it).
"$ETCDPROOF_ROOT/scripts/build-seaweedfs.sh" >/dev/null
# The browser test (conformance/report/html) drives chromium, which `make test`
# names to it as ETCDPROOF_CHROMIUM. One set already (another binary, or
# "skip") says this machine needs none from apt.
if [[ -z ${ETCDPROOF_CHROMIUM:-} ]]; then
  "$ETCDPROOF_ROOT/scripts/ensure-tool.sh" chromium >/dev/null
fi
mkdir -p "$assets"
ln -sf "$k8s_bin/kube-apiserver" "$kubectl_bin/kubectl" "$etcd_bin/etcd" "$assets/"
echo "$assets"
