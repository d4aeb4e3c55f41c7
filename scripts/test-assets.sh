#!/usr/bin/env bash
# Control-plane binaries for envtest (kube-apiserver + etcd), built from source
# and cached. Prints the folder to use as KUBEBUILDER_ASSETS.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

k8s_version=${1:-$K8S_CURRENT}
assets="$ETCDPROOF_CACHE/envtest/$k8s_version"
k8s_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$k8s_version" kube-apiserver kubectl)
etcd_bin=$("$ETCDPROOF_ROOT/scripts/build-etcd.sh" "$ETCD_CONTROL_PLANE_VERSION")
mkdir -p "$assets"
ln -sf "$k8s_bin/kube-apiserver" "$k8s_bin/kubectl" "$etcd_bin/etcd" "$assets/"
echo "$assets"
