#!/usr/bin/env bash
# Build a kind node image for one Kubernetes release with no registry: every
# image kubeadm, containerd and kind need is built here from the Go module
# proxy and baked into the node, together with the kube-router CNI.
# usage: build-node-image.sh VERSION     prints the node image tag.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

version=${1:?usage: build-node-image.sh VERSION (e.g. $K8S_CURRENT)}
# Node-side pins follow the release (versions.sh node_pins), here and in the scripts called below.
export ETCDPROOF_NODE_K8S=$version
node_pins "$version"
KIND_BASE_IMAGE=$(kind_base_image)
node_image=$(offline_node_image "$version")
work="$ETCDPROOF_CACHE/node/$version"
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubeadm kubectl)
KUBE_ROUTER_IMAGE=etcdproof/kube-router:$KUBE_ROUTER_VERSION

# kind_image_ref CONST: an image reference kind hard-codes for its default CNI
# and storage; the node must hold an image under exactly that name.
kind_image_ref() {
  local src
  src="$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION/pkg/build/nodeimage"
  sed -n "s/^const $1 = \"\(.*\)\"/\1/p" "$src"/const_*.go
}

# debootstrap waits on the network and disk, the Go builds on the CPU: overlap them.
if ! image_exists "$KIND_BASE_IMAGE"; then
  "$ETCDPROOF_ROOT/scripts/build-base-image.sh" rootfs &
  rootfs_pid=$!
fi

# Resolve every input first so failures name what is missing before any image work.
k8s_bin=$("$ETCDPROOF_ROOT/scripts/build-k8s.sh" "$version" "${K8S_CMDS[@]}")
tool_dirs=$("$ETCDPROOF_ROOT/scripts/build-tools.sh" pause coredns local-path-provisioner kube-router)
read -r pause_dir coredns_dir lpp_dir router_dir <<<"${tool_dirs//$'\n'/ }"
if [[ -n "${rootfs_pid:-}" ]]; then
  wait "$rootfs_pid" || die "the debootstrap rootfs failed; see $LOG_DIR/debootstrap-$DEBIAN_SUITE.log"
fi
base_image=$("$ETCDPROOF_ROOT/scripts/build-base-image.sh")
mapfile -t kubeadm_images < <("$k8s_bin/kubeadm" config images list --kubernetes-version "$version" 2>/dev/null)
((${#kubeadm_images[@]})) || die "kubeadm $version listed no images"
ref_for() { printf '%s\n' "${kubeadm_images[@]}" | grep "/$1:" || die "kubeadm $version lists no $1 image"; }
etcd_ref=$(ref_for etcd)
coredns_ref=$(ref_for coredns)
# kind's node-image builder pulls every image kubeadm lists that the node
# lacks: with another CoreDNS than kubeadm's (KUBEADM_DNS_IMAGE_TAG), the
# node also carries kubeadm's name for it, which nothing runs (the cluster's
# kubeadm configuration asks for the tag the image really is).
unused_dns_refs=()
if [[ -n "$KUBEADM_DNS_IMAGE_TAG" ]]; then
  log "kubeadm $version wants $coredns_ref; its nodes run tag $KUBEADM_DNS_IMAGE_TAG, which the cluster's kubeadm configuration asks for (versions.sh KUBEADM_DNS_IMAGE_TAG)"
  unused_dns_refs=("$coredns_ref")
  coredns_ref=${coredns_ref%:*}:$KUBEADM_DNS_IMAGE_TAG
fi
etcd_version=v${etcd_ref##*:}
etcd_version=${etcd_version%-*}
# kubeadm tags coredns with or without the v (1.6.2, v1.12.1).
coredns_tag=${coredns_ref##*:}
[[ "v${coredns_tag#v}" == "$COREDNS_VERSION" ]] ||
  die "kubeadm $version wants $coredns_ref but versions.sh pins COREDNS_VERSION=$COREDNS_VERSION"
if [[ -n "$NODE_ETCD_VERSION" && "$NODE_ETCD_VERSION" != "$etcd_version" ]]; then
  log "kubeadm $version wants etcd $etcd_version; its image holds etcd $NODE_ETCD_VERSION (versions.sh NODE_ETCD_VERSION)"
  etcd_version=$NODE_ETCD_VERSION
fi
etcd_dir=$("$ETCDPROOF_ROOT/scripts/build-etcd.sh" "$etcd_version")
kindnetd_ref=$(kind_image_ref kindnetdImage)
lpp_ref=$(kind_image_ref storageProvisionerImage)
lpp_helper_ref=$(kind_image_ref storageHelperImage)
[[ -n "$kindnetd_ref" && -n "$lpp_ref" && -n "$lpp_helper_ref" ]] || die "could not read kind $KIND_VERSION's image names"
pause_refs=("$(ref_for pause)" "$(sed -n 's/.*sandbox_image = "\(.*\)"/\1/p' \
  "$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION/images/base/files/etc/containerd/config.toml")")

component_images() {
  local c ref
  ensure_busybox_image
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    binary_image "$(ref_for "$c")" "$BUSYBOX_IMAGE" "/usr/local/bin/$c" "$k8s_bin/$c"
  done
  # kube-proxy and kube-router program iptables/ipset: give them the node's userland.
  binary_image "$(ref_for kube-proxy)" "$base_image" /usr/local/bin/kube-proxy "$k8s_bin/kube-proxy"
  binary_image "$KUBE_ROUTER_IMAGE" "$base_image" /usr/local/bin/kube-router "$router_dir/kube-router"
  if [[ -n "$NODE_ETCDCTL_UNBRACKET_IPV4" ]]; then
    etcd_image_with_unbracketing_etcdctl
  else
    binary_image "$etcd_ref" "$BUSYBOX_IMAGE" /usr/local/bin/etcd "$etcd_dir/etcd" "$etcd_dir/etcdctl"
  fi
  binary_image "$coredns_ref" "$BUSYBOX_IMAGE" /usr/local/bin/coredns "$coredns_dir/coredns"
  for ref in "${unused_dns_refs[@]}"; do docker tag "$coredns_ref" "$ref"; done
  binary_image "$lpp_ref" "$BUSYBOX_IMAGE" "" "$lpp_dir/local-path-provisioner"
  docker tag "$BUSYBOX_IMAGE" "$lpp_helper_ref"
  local ctx="$ETCDPROOF_CACHE/images/ctx/pause"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$pause_dir/pause" "$ctx/"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Dockerfile"
  build_context_image "${pause_refs[0]}" "$ctx"
  for ref in "${pause_refs[@]:1}"; do docker tag "${pause_refs[0]}" "$ref"; done
  # kind always bakes its default CNI image, even when a cluster disables it;
  # kindnetd is not obtainable from the module proxy, so this name holds pause.
  # Offline clusters run kube-router instead (networking.disableDefaultCNI).
  docker tag "${pause_refs[0]}" "$kindnetd_ref"
}

# etcd_image_with_unbracketing_etcdctl: the node's etcd image, its etcdctl a
# busybox sh shim that turns https://[127.0.0.1]:2379 (kubeadm 1.15's liveness
# probe) into https://127.0.0.1:2379 for the real etcdctl, which refuses the
# brackets (see versions.sh NODE_ETCDCTL_UNBRACKET_IPV4).
etcd_image_with_unbracketing_etcdctl() {
  local dir
  dir=$(mktemp -d)
  cp "$etcd_dir/etcd" "$dir/etcd"
  cp "$etcd_dir/etcdctl" "$dir/etcdctl-$etcd_version"
  cat >"$dir/etcdctl" <<SHIM
#!/bin/sh
# etcd $etcd_version stands in for the etcd kubeadm $version deploys; its etcdctl
# refuses an IPv4 endpoint in brackets, which kubeadm's liveness probe names.
for a; do shift; set -- "\$@" "\$(echo "\$a" | sed 's#\[\([0-9.]*\)\]#\1#g')"; done
exec /usr/local/bin/etcdctl-$etcd_version "\$@"
SHIM
  chmod 0755 "$dir/etcdctl"
  binary_image "$etcd_ref" "$BUSYBOX_IMAGE" /usr/local/bin/etcd "$dir/etcd" "$dir/etcdctl-$etcd_version" "$dir/etcdctl"
  rm -rf "$dir"
}

server_tarball() {
  local tree="$work/tree" bin="$work/tree/kubernetes/server/bin" c
  rm -rf "$tree"
  mkdir -p "$bin"
  echo "$version" >"$tree/kubernetes/version"
  cp "$k8s_bin/kubeadm" "$k8s_bin/kubelet" "$k8s_bin/kubectl" "$bin/"
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    save_images "$bin/$c.tar" "$(ref_for "$c")"
  done
  # kind loads only these four archives: every other image rides in kube-proxy.tar.
  save_images "$bin/kube-proxy.tar" "$(ref_for kube-proxy)" "$etcd_ref" "$coredns_ref" "${unused_dns_refs[@]}" \
    "${pause_refs[@]}" "$kindnetd_ref" "$lpp_ref" "$lpp_helper_ref" "$KUBE_ROUTER_IMAGE"
  tar -C "$tree" -c kubernetes | pigz -1 >"$work/kubernetes-server-linux-amd64.tar.gz.tmp"
  mv "$work/kubernetes-server-linux-amd64.tar.gz.tmp" "$work/kubernetes-server-linux-amd64.tar.gz"
  rm -rf "$tree"
}

# kind's node-image builder, as a library in bin/etcdproof (no kind binary).
node_image_build() {
  etcdproof_cli cluster build-node-image --server-tarball "$work/kubernetes-server-linux-amd64.tar.gz" \
    --base-image "$base_image" --image "$node_image"
  rm -f "$work/kubernetes-server-linux-amd64.tar.gz"
}

if image_exists "$node_image"; then
  log "== node-image-$version: cached (image $node_image)"
else
  mkdir -p "$work"
  step "node-components-$version" "" component_images
  step "node-server-tarball-$version" "" server_tarball
  step "node-image-$version" "" node_image_build
fi
echo "$node_image"
