#!/usr/bin/env bash
# Build OLM v0 and opm from the Go module proxy and package them under their
# upstream names, with the upstream images' shape (an image under an upstream
# name must behave like that image):
#   quay.io/operator-framework/olm:$OLM_VERSION   olm, catalog, package-server,
#       copy-content and cpb in /bin, /bin/cp for bundle-unpack Jobs, USER 1001,
#       ENTRYPOINT /bin/olm: OLM's own Dockerfile on a distroless static:debug
#       stand-in
#   quay.io/operator-framework/opm:$OPM_VERSION   /bin/opm, /bin/grpc_health_probe,
#       /etc/nsswitch.conf, USER 1001, ENTRYPOINT /bin/opm: operator-registry's
#       release/goreleaser.opm.Dockerfile on the same base
# Pins: OLM_VERSION, OPM_VERSION, OLM_HELM_VERSION in scripts/lib/versions.sh.
#
# usage: build-olm.sh [images]   build both images (cached), check them, print their names
#        build-olm.sh catalog    check that the opm image validates and serves
#                                manifests/olm/catalog (what the catalog server runs)
#        build-olm.sh manifests  render OLM's release install manifests into
#                                manifests/olm/install/upstream/ (see render_manifests;
#                                not committed: rendered from the module proxy's OLM)
#        build-olm.sh install    images, manifests, then OLM installed in the cluster
#                                CLUSTER (K8S_VERSION): images loaded into its nodes,
#                                install applied server-side, and waited for
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/baseimages.sh
source "$ETCDPROOF_ROOT/scripts/lib/baseimages.sh"
# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"

# grpc_health_probe is not pinned here: operator-registry's Makefile takes its
# version from its go.mod (GRPC_HEALTH_PROBE_VERSION), and so does grpc_probe_version.

OLM_MODULE=github.com/operator-framework/operator-lifecycle-manager
OPM_MODULE=github.com/operator-framework/operator-registry
PROBE_MODULE=github.com/grpc-ecosystem/grpc-health-probe
OLM_IMAGE=quay.io/operator-framework/olm:$OLM_VERSION
OPM_IMAGE=quay.io/operator-framework/opm:$OPM_VERSION
# Both upstream Dockerfiles start FROM gcr.io/distroless/static:debug, which
# has been static-debian13:debug since distroless moved its unsuffixed tags to
# Debian 13 (commit "Move defaults to debian13", January 2026), before both
# releases (OLM v0.46.0: July 2026, operator-registry v1.74.0: August 2026).
DEBUG_BASE=etcdproof/distroless-static:debian13-debug
DEBUG_BASE_SUITE=trixie

olm_dir=$ETCDPROOF_CACHE/olm/$OLM_VERSION
opm_dir=$ETCDPROOF_CACHE/opm/$OPM_VERSION
helm=$ETCDPROOF_CACHE/helm/$OLM_HELM_VERSION/helm
install_dir=$ETCDPROOF_ROOT/manifests/olm/install/upstream
# OLM's Dockerfile copies these from goreleaser's output (.goreleaser.yml builds).
OLM_PROGRAMS=(olm catalog package-server copy-content cpb)
OLM_PACKAGES=(./cmd/olm ./cmd/catalog ./cmd/package-server ./cmd/copy-content ./util/cpb)

# module_commit MODULE@VERSION: the commit the proxy says the version is
# (its Origin.Hash), or "unknown" from a proxy that does not tell.
module_commit() {
  local tmp hash
  tmp=$(mktemp -d)
  hash=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1" | jq -r '.Origin.Hash // "unknown"')
  rmdir "$tmp"
  echo "$hash"
}

# module_time MODULE@VERSION: when the version was tagged, from the .info
# file the proxy served.
module_time() {
  local tmp info
  tmp=$(mktemp -d)
  info=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1" | jq -r .Info)
  rmdir "$tmp"
  jq -r '.Time // "unknown"' "$info"
}

# go_build_module MODULE@VERSION OUTDIR GO_BUILD_ARGS...: `go build -o OUTDIR/`
# in a writable copy of the module's source, as its own main module (its
# go.sum pins every dependency; see gomodule.sh). Unlike build_module_program
# it takes the release's own tags and ldflags, and several packages at once.
go_build_module() {
  local module=$1 out=$2 dir src; shift 2
  dir=$(module_source "$module")
  mkdir -p "$out"
  src=$(mktemp -d "$ETCDPROOF_CACHE/src.XXXXXX")
  cp -a "$dir/." "$src/"
  chmod -R u+w "$src"
  (cd "$src" && GOFLAGS=-mod=mod go build -trimpath -o "$out/" "$@") || { rm -rf "$src"; return 1; }
  rm -rf "$src"
}

# OLM's goreleaser builds (.goreleaser.yml): CGO off, tag json1, the version
# and commit in pkg/version (what `olm --version` prints). -s -w as its
# Makefile's build; goreleaser's release builds keep the symbols.
build_olm() {
  local commit pkg=$OLM_MODULE/pkg/version
  commit=$(module_commit "$OLM_MODULE@$OLM_VERSION")
  rm -rf "$olm_dir/bin.tmp"
  go_build_module "$OLM_MODULE@$OLM_VERSION" "$olm_dir/bin.tmp" -tags json1 \
    -ldflags "-s -w -X '$pkg.OLMVersion=$OLM_VERSION' -X '$pkg.GitCommit=$commit'" "${OLM_PACKAGES[@]}"
  "$olm_dir/bin.tmp/olm" --version
  rm -rf "${olm_dir:?}/bin"
  mv "$olm_dir/bin.tmp" "$olm_dir/bin"
}

# opm as release/goreleaser.linux.yaml builds it, but with CGO off: upstream
# links sqlite (mattn/go-sqlite3) statically with cgo for the deprecated
# sqlite-index commands (`opm registry`, `opm index`); without cgo those fail
# at run time. `opm serve` of a file-based catalog, `opm validate` and the
# bundle-unpack commands OLM runs do not use sqlite. The Makefile's
# GIT_COMMIT is `git rev-parse --short`; BUILD_DATE is the tag's time here
# (the proxy's), not the build's, so rebuilds are identical.
build_opm() {
  local commit date pkg=$OPM_MODULE/cmd/opm/version
  commit=$(module_commit "$OPM_MODULE@$OPM_VERSION")
  date=$(module_time "$OPM_MODULE@$OPM_VERSION")
  rm -rf "$opm_dir/bin.tmp"
  go_build_module "$OPM_MODULE@$OPM_VERSION" "$opm_dir/bin.tmp" \
    -tags json1,netgo,osusergo,containers_image_openpgp \
    -ldflags "-s -w -X '$pkg.gitCommit=${commit:0:7}' -X '$pkg.opmVersion=$OPM_VERSION' -X '$pkg.buildDate=$date'" ./cmd/opm
  "$opm_dir/bin.tmp/opm" version
  rm -rf "${opm_dir:?}/bin"
  mv "$opm_dir/bin.tmp" "$opm_dir/bin"
}

# grpc_probe_version: the grpc-health-probe operator-registry's go.mod requires
# (its Makefile passes that to the image build as GRPC_HEALTH_PROBE_VERSION).
grpc_probe_version() {
  local v
  v=$(awk -v m="$PROBE_MODULE" '$1 == m { print $2; exit }' "$(module_source "$OPM_MODULE@$OPM_VERSION")/go.mod")
  [[ -n "$v" ]] || die "$OPM_MODULE@$OPM_VERSION's go.mod does not require $PROBE_MODULE"
  echo "$v"
}

# The probe's image (ghcr.io/grpc-ecosystem/grpc-health-probe) is a ko build
# of its .goreleaser.yml build: CGO off, tag netgo, -w, the version without
# its "v" in main.versionTag; ko adds -trimpath.
build_probe() {
  local version=$1 out=$ETCDPROOF_CACHE/grpc-health-probe/$1
  rm -rf "$out/bin.tmp"
  go_build_module "$PROBE_MODULE@$version" "$out/bin.tmp" -tags netgo \
    -ldflags "-w -X main.versionTag=${version#v}" .
  "$out/bin.tmp/grpc-health-probe" -version
  rm -rf "${out:?}/bin"
  mv "$out/bin.tmp" "$out/bin"
}

# The stand-in for gcr.io/distroless/static:debug (static-debian13, debug):
# the project's distroless static files (baseimages.sh) from Debian 13, plus
# what Debian 13's base-files adds and the image holds (/bin, /sbin, /lib,
# /lib64 as links into /usr: OLM's Dockerfile makes /bin/cp through /bin),
# plus the debug layer: a static busybox as /busybox/busybox with one link
# per applet in /busybox, /busybox on PATH, ENTRYPOINT /busybox/sh, user 0.
# Distroless' busybox is docker-library's 1.37 (musl); Debian 13's
# busybox-static is 1.37 too, with Debian's applet set.
debug_base_image() {
  local dir="$ETCDPROOF_CACHE/rootfs/distroless-static-debian13-debug" ctx="$ETCDPROOF_CACHE/images/ctx/distroless-debug" tmp d applet
  distroless_static_rootfs "$DEBUG_BASE_SUITE" "$dir"
  mkdir -p "$dir/usr/bin" "$dir/usr/sbin" "$dir/usr/lib64"
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$dir/$d"; done
  tmp=$(mktemp -d)
  debian_download "$DEBUG_BASE_SUITE" "$tmp" busybox-static
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/x"
  mkdir -p "$dir/busybox"
  install -m 0755 "$tmp/x/usr/bin/busybox" "$dir/busybox/busybox"
  for applet in $("$dir/busybox/busybox" --list); do
    [[ "$applet" == busybox ]] || ln -s /busybox/busybox "$dir/busybox/$applet"
  done
  rm -rf "$tmp" "$ctx"
  mkdir -p "$ctx"
  tar -C "$dir" --numeric-owner -cf "$ctx/rootfs.tar" .
  cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/busybox
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 0
WORKDIR /
ENTRYPOINT ["/busybox/sh"]
EOF
  build_context_image "$DEBUG_BASE" "$ctx"
  rm -rf "$ctx" "$dir"
}

# local_dockerfile FILE: the upstream Dockerfile with its FROM lines pointed at
# local stand-ins, every other line as it is. The probe's ko-built image is
# only a source of its binary (/ko-app/grpc-health-probe): an empty stage
# holding the binary built here at that path stands in for it. A FROM without
# a stand-in is an error: review the new Dockerfile.
local_dockerfile() {
  awk -v base="$DEBUG_BASE" '
    toupper($1) == "FROM" && $2 ~ /^gcr\.io\/distroless\/static:debug(@.*)?$/ { $2 = base; print; next }
    toupper($1) == "FROM" && $2 ~ /^ghcr\.io\/grpc-ecosystem\/grpc-health-probe:/ && toupper($3) == "AS" {
      print "FROM scratch AS " $4
      print "COPY grpc-health-probe /ko-app/grpc-health-probe"
      next
    }
    toupper($1) == "FROM" { print "no local stand-in for FROM " $2 > "/dev/stderr"; bad = 1; next }
    { print }
    END { exit bad }' "$1"
}

# OLM's Dockerfile copies the binaries from its build context.
olm_image() {
  local ctx="$ETCDPROOF_CACHE/images/ctx/olm-$OLM_VERSION" p
  rm -rf "$ctx"
  mkdir -p "$ctx"
  # Hard links: the context is on the cache's file system, and 270 MB.
  for p in "${OLM_PROGRAMS[@]}"; do cp -l "$olm_dir/bin/$p" "$ctx/"; done
  local_dockerfile "$(module_source "$OLM_MODULE@$OLM_VERSION")/Dockerfile" >"$ctx/Dockerfile"
  build_context_image "$OLM_IMAGE" "$ctx"
  rm -rf "$ctx"
}

# goreleaser's context for the opm image: <os>/<arch>/opm and the
# repository's nsswitch.conf (extra_files). BuildKit sets TARGETOS and
# TARGETARCH itself; the classic builder takes them as build arguments.
opm_image() {
  local ctx="$ETCDPROOF_CACHE/images/ctx/opm-$OPM_VERSION" src arch probe
  src=$(module_source "$OPM_MODULE@$OPM_VERSION")
  arch=$(go env GOARCH)
  probe=$ETCDPROOF_CACHE/grpc-health-probe/$(grpc_probe_version)/bin/grpc-health-probe
  rm -rf "$ctx"
  mkdir -p "$ctx/linux/$arch"
  cp -l "$opm_dir/bin/opm" "$ctx/linux/$arch/opm"
  install -m 0644 "$src/nsswitch.conf" "$ctx/nsswitch.conf"  # 0644 as in a checkout; the module cache is read-only
  cp -l "$probe" "$ctx/grpc-health-probe"
  local_dockerfile "$src/release/goreleaser.opm.Dockerfile" >"$ctx/Dockerfile"
  docker build -q --build-arg TARGETOS=linux --build-arg "TARGETARCH=$arch" -t "$OPM_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

# expect WHAT GOT WANT: fail unless GOT is WANT.
expect() { [[ "$2" == "$3" ]] || die "$1 is '$2', want '$3'"; }

# config IMAGE JQ: a value of the image's config, as compact JSON.
config() { docker image inspect -f '{{json .Config}}' "$1" | jq -c "$2"; }

# The OLM image as its Dockerfile and OLM's own use of it say: the config, each
# program's version, and the commands OLM runs in it as the "util image":
# `/bin/cp -Rv /bin/cpb /util/cpb` in bundle-unpack Jobs and
# `cp /bin/copy-content ...` (cp found on PATH) in catalog pods.
verify_olm_image() {
  local out
  expect "$OLM_IMAGE user" "$(config "$OLM_IMAGE" .User)" '"1001"'
  expect "$OLM_IMAGE entrypoint" "$(config "$OLM_IMAGE" .Entrypoint)" '["/bin/olm"]'
  expect "$OLM_IMAGE command" "$(config "$OLM_IMAGE" .Cmd)" 'null'
  expect "$OLM_IMAGE working directory" "$(config "$OLM_IMAGE" .WorkingDir)" '"/"'
  expect "$OLM_IMAGE ports" "$(config "$OLM_IMAGE" '.ExposedPorts | keys')" '["5443/tcp","8080/tcp"]'
  out=$(docker run --rm "$OLM_IMAGE" --version)
  [[ "$out" == *"OLM version: $OLM_VERSION"* ]] || die "olm --version says: $out"
  out=$(docker run --rm --entrypoint /bin/catalog "$OLM_IMAGE" --version)
  [[ "$out" == *"OLM version: $OLM_VERSION"* ]] || die "catalog --version says: $out"
  docker run --rm --entrypoint /bin/package-server "$OLM_IMAGE" --help >/dev/null
  docker run --rm --entrypoint /bin/cp "$OLM_IMAGE" -Rv /bin/cpb /tmp/cpb
  docker run --rm --entrypoint cp "$OLM_IMAGE" /bin/copy-content /tmp/copy-content
  docker run --rm --entrypoint /bin/copy-content "$OLM_IMAGE" --help >/dev/null
  # A distroless image: no shell but the debug layer's.
  if docker run --rm --entrypoint /bin/sh "$OLM_IMAGE" -c true 2>/dev/null; then die "$OLM_IMAGE has /bin/sh"; fi
}

# serve_check CATALOG_DIR: `opm validate` of a file-based catalog in the opm
# image, then `opm serve` of it as the catalog server Deployment
# (manifests/olm/catalog-server) runs it: user 1001, read-only root, an empty
# writable /tmp, the catalog read-only at /configs; healthy by the
# grpc_health_probe command OLM's own catalog pods are probed with.
serve_check() {
  local catalog=$1 name=etcdproof-opm-check-$$ i ok=
  docker run --rm -v "$catalog:/configs:ro" "$OPM_IMAGE" validate /configs
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker run -d --name "$name" --read-only --tmpfs /tmp -v "$catalog:/configs:ro" "$OPM_IMAGE" serve /configs >/dev/null
  for i in $(seq 1 30); do
    if docker exec "$name" grpc_health_probe -addr=:50051 -rpc-timeout=5s; then ok=1; break; fi
    sleep 1
  done
  docker logs "$name" 2>&1 | tail -n 5
  docker rm -f "$name" >/dev/null
  [[ -n "$ok" ]] || die "opm serve of $catalog did not become healthy in ${i}s"
}

# The opm image: its config, the versions of its programs, its nsswitch.conf,
# and serving a small catalog of its own.
verify_opm_image() {
  local out probe_version catalog
  probe_version=$(grpc_probe_version)
  expect "$OPM_IMAGE user" "$(config "$OPM_IMAGE" .User)" '"1001"'
  expect "$OPM_IMAGE entrypoint" "$(config "$OPM_IMAGE" .Entrypoint)" '["/bin/opm"]'
  expect "$OPM_IMAGE command" "$(config "$OPM_IMAGE" .Cmd)" 'null'
  out=$(docker run --rm "$OPM_IMAGE" version)
  [[ "$out" == *"OpmVersion:\"$OPM_VERSION\""* ]] || die "opm version says: $out"
  out=$(docker run --rm --entrypoint /bin/grpc_health_probe "$OPM_IMAGE" -version 2>&1)
  [[ "$out" == *"${probe_version#v}"* ]] || die "grpc_health_probe -version says: $out"
  out=$(docker run --rm --entrypoint /busybox/cat "$OPM_IMAGE" /etc/nsswitch.conf)
  expect "$OPM_IMAGE /etc/nsswitch.conf" "$out" "$(cat "$(module_source "$OPM_MODULE@$OPM_VERSION")/nsswitch.conf")"
  if docker run --rm --entrypoint /bin/sh "$OPM_IMAGE" -c true 2>/dev/null; then die "$OPM_IMAGE has /bin/sh"; fi
  catalog=$(mktemp -d)
  mkdir "$catalog/check"
  cat >"$catalog/check/catalog.yaml" <<'EOF2'
schema: olm.package
name: check
defaultChannel: stable
---
schema: olm.channel
package: check
name: stable
entries:
- name: check.v0.0.1
---
schema: olm.bundle
name: check.v0.0.1
package: check
image: example.invalid/check-bundle:v0.0.1
properties:
- type: olm.package
  value: {packageName: check, version: 0.0.1}
EOF2
  chmod -R a+rX "$catalog"
  serve_check "$catalog"
  rm -rf "$catalog"
}

# The committed install manifests must be the ones of this OLM_VERSION and
# these image tags (render_manifests writes them; a bump needs a re-render).
check_manifests() {
  grep -q "^# From $OLM_MODULE@$OLM_VERSION " "$install_dir/olm.yaml" 2>/dev/null ||
    die "manifests/olm/install/upstream/olm.yaml is not OLM $OLM_VERSION's: run scripts/build-olm.sh manifests"
  grep -q -- "--opmImage=$OPM_IMAGE\$" "$install_dir/olm.yaml" ||
    die "manifests/olm/install/upstream/olm.yaml does not name $OPM_IMAGE: run scripts/build-olm.sh manifests"
}

build_helm() {
  build_module_program helm.sh/helm/v3 "$OLM_HELM_VERSION" ./cmd/helm "$helm"
  "$helm.tmp" version
  mv "$helm.tmp" "$helm"
}

# render_manifests OUTDIR: OLM's release install manifests (the crds.yaml and
# olm.yaml `install.sh $OLM_VERSION` applies), made as the release makes them:
# scripts/package_release.sh renders deploy/chart with deploy/upstream/values.yaml
# (chart version = the release) after setting the image references with yq,
# scripts/package_quickstart.sh concatenates the output: *.crd.yaml into
# crds.yaml, the rest into olm.yaml, comment lines dropped.
# One difference: the release names its images by digest (resolved from the
# registry), which neither exists offline nor matches images built here;
# these name them by tag. The quickstart/ copies in the module's deploy/
# folder are not the release's: they were last generated years ago (CRDs of
# controller-gen v0.4.1, no NetworkPolicies, no pod-security labels).
render_manifests() {
  local out=$1 src tmp f dest
  src=$(module_source "$OLM_MODULE@$OLM_VERSION")
  tmp=$(mktemp -d)
  cp -R "$src/deploy/chart" "$tmp/chart"
  chmod -R u+w "$tmp/chart"
  sed "s/^[Vv]ersion:.*\$/version: $OLM_VERSION/" "$src/deploy/chart/Chart.yaml" >"$tmp/chart/Chart.yaml"
  # What package_release.sh's yq edits set in the values.
  cat >"$tmp/release-values.yaml" <<EOF
olm: {image: {ref: "$OLM_IMAGE"}}
catalog: {image: {ref: "$OLM_IMAGE"}, opmImageArgs: "--opmImage=$OPM_IMAGE"}
package: {image: {ref: "$OLM_IMAGE"}}
EOF
  "$helm" template -n olm -f "$src/deploy/upstream/values.yaml" -f "$tmp/release-values.yaml" \
    --include-crds --output-dir "$tmp/out" "$tmp/chart" >/dev/null
  mkdir -p "$tmp/flat"
  cp -R "$tmp/out/olm/templates/." "$tmp/out/olm/crds/." "$tmp/flat/"
  local header="# From $OLM_MODULE@$OLM_VERSION (deploy/chart, deploy/upstream/values.yaml), rendered by
# scripts/build-olm.sh manifests as OLM's release renders it, images by tag; do not edit."
  printf '%s\n' "$header" >"$tmp/crds.yaml"
  printf '%s\n' "$header" >"$tmp/olm.yaml"
  # The release's glob order: file names in C collation.
  local LC_ALL=C
  for f in "$tmp"/flat/*.yaml; do
    if [[ "$f" == *.crd.yaml ]]; then dest=$tmp/crds.yaml; else dest=$tmp/olm.yaml; fi
    awk 'NR==1 && !/^---*/ {print "---"} !/^[[:space:]]*#/ {print}' "$f" >>"$dest"
  done
  mkdir -p "$out"
  cp "$tmp/crds.yaml" "$tmp/olm.yaml" "$out/"
  install -m 0644 "$src/LICENSE" "$out/LICENSE"
  rm -rf "$tmp"
}

images() {
  local probe_version
  probe_version=$(grpc_probe_version)
  step "olm-$OLM_VERSION-programs" "$olm_dir/bin/cpb" build_olm
  step "opm-$OPM_VERSION" "$opm_dir/bin/opm" build_opm
  step "grpc-health-probe-$probe_version" "$ETCDPROOF_CACHE/grpc-health-probe/$probe_version/bin/grpc-health-probe" build_probe "$probe_version"
  image_step base-debian13-distroless-static-debug "$DEBUG_BASE" debug_base_image
  image_step "image-olm-$OLM_VERSION" "$OLM_IMAGE" olm_image
  step "image-olm-$OLM_VERSION-verify" "" verify_olm_image
  image_step "image-opm-$OPM_VERSION" "$OPM_IMAGE" opm_image
  step "image-opm-$OPM_VERSION-verify" "" verify_opm_image
  printf '%s\n' "$OLM_IMAGE" "$OPM_IMAGE"
}

manifests() {
  step "helm-$OLM_HELM_VERSION" "$helm" build_helm
  step "olm-$OLM_VERSION-manifests" "" render_manifests "$install_dir"
  check_manifests
  log "wrote ${install_dir#"$ETCDPROOF_ROOT"/}/{crds.yaml,olm.yaml,LICENSE}"
}

# install_olm: OLM in the cluster, as its release's install.sh does it
# (CRDs, then the rest, then wait for the package server's CSV), through our
# kustomization of the rendered release. Server-side: the CSV CRD is too big
# for a client-side apply's annotation. Applying again is harmless.
install_olm() {
  "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" apply --server-side --force-conflicts -f "$install_dir/crds.yaml" >/dev/null
  "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" wait --for=condition=Established --timeout=60s -f "$install_dir/crds.yaml" >/dev/null
  "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" apply --server-side --force-conflicts -k "$ETCDPROOF_ROOT/manifests/olm/install" >/dev/null
  "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" -n olm rollout status deployment/olm-operator deployment/catalog-operator --timeout=5m
  local i phase=""
  for i in $(seq 150); do
    phase=$("$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" -n olm get csv packageserver -o jsonpath='{.status.phase}' 2>/dev/null || true)
    [[ $phase == Succeeded ]] && return 0
    sleep 2
  done
  die "OLM's packageserver CSV is ${phase:-absent} after 5 min (kubectl -n olm describe csv packageserver)"
}

install_into_cluster() {
  images >/dev/null
  manifests
  # shellcheck source=scripts/lib/cluster.sh
  source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"
  cluster_exists || die "cluster $CLUSTER_NAME does not exist: make cluster first"
  step "olm-load-$CLUSTER_NAME" "" load_images "$OLM_IMAGE" "$OPM_IMAGE"
  step "olm-install-$CLUSTER_NAME" "" install_olm
  log "OLM $OLM_VERSION installed in cluster $CLUSTER_NAME"
}

case ${1:-images} in
  images) images ;;
  catalog)
    image_exists "$OPM_IMAGE" || die "no image $OPM_IMAGE: run scripts/build-olm.sh first"
    step opm-serve-catalog "" serve_check "$ETCDPROOF_ROOT/manifests/olm/catalog"
    ;;
  manifests) manifests ;;
  install) install_into_cluster ;;
  *) die "usage: build-olm.sh [images|catalog|manifests|install]" ;;
esac
