#!/usr/bin/env bash
# Build the images the runs of some profiles need, and no other, and load them
# into the kind cluster when it exists: the image step of make e2e, results,
# bench and e2e-selftest (make images builds every image).
# The list is etcdproof's: `etcdproof profile images ARGS...` (each profile's
# images, the etcd releases its checks run, the object store when it claims
# backup-restore, the traffic image). Each image goes to the builder that
# makes it (builder_of); the operator's and etcdproof's own images are made by
# make image, selftest-image and etcdproof-image, which the targets run next.
# An image no builder makes is loaded from Docker, pulled first when Docker
# lacks it; one it cannot pull stops the step before anything is built, named
# with how to provide it.
# usage: build-run-images.sh PROFILE... | --selftest   (etcdproof profile images' arguments)
# env: ETCDPROOF_CLUSTER (etcdproof), ETCDPROOF_IMAGE (the traffic image),
#      ETCDPROOF_IMAGES_DRY_RUN=1 (print each image and what makes it; build,
#      pull and load nothing, and need no Docker)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/images.sh
source "$ETCDPROOF_ROOT/scripts/lib/images.sh"
# shellcheck source=scripts/lib/baseimages.sh
source "$ETCDPROOF_ROOT/scripts/lib/baseimages.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"
# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"
# shellcheck source=scripts/lib/mirror.sh
source "$ETCDPROOF_ROOT/scripts/lib/mirror.sh"
# shellcheck source=scripts/lib/workload.sh
source "$ETCDPROOF_ROOT/scripts/lib/workload.sh"
# shellcheck source=scripts/lib/thirdparty.sh
source "$ETCDPROOF_ROOT/scripts/lib/thirdparty.sh"

(($# > 0)) || die "usage: build-run-images.sh PROFILE... | --selftest"
dry_run=${ETCDPROOF_IMAGES_DRY_RUN:-}

# builder_of IMAGE: what makes IMAGE here: "etcd VERSION", busybox,
# seaweedfs, coreos-operator, curl, olm, or "make TARGET" for this
# repository's own images; nothing when no builder does.
builder_of() {
  local image=$1 v repo
  for v in $ETCD_WORKLOAD_VERSIONS; do
    for repo in "${ETCD_REPOSITORIES[@]}"; do
      [[ $image == "$repo:$v" ]] && { echo "etcd $v"; return; }
    done
  done
  [[ " ${BUSYBOX_TAGS[*]} " == *" $image "* ]] && { echo busybox; return; }
  case $image in
    "$SEAWEEDFS_IMAGE") echo seaweedfs ;;
    "$COREOS_OPERATOR_IMAGE") echo coreos-operator ;;
    "$TUTUM_CURL_IMAGE") echo curl ;;
    "quay.io/operator-framework/olm:$OLM_VERSION" | "quay.io/operator-framework/opm:$OPM_VERSION") echo olm ;;
    etcdproof/etcd-operator:selftest) echo "make selftest-image" ;;
    etcdproof/etcd-operator:*) echo "make image" ;;
    etcdproof/etcdproof:*) echo "make etcdproof-image" ;;
  esac
}

# describe BUILDER: what the builder is, for the dry run.
describe() {
  case $1 in
    etcd\ *) echo "etcd ${1#etcd } from its release Dockerfile (scripts/lib/workload.sh)" ;;
    busybox) echo "busybox with glibc's name resolution, every BUSYBOX_WORKLOAD_TAGS tag (scripts/lib/workload.sh)" ;;
    seaweedfs) echo "SeaweedFS from the module proxy (scripts/lib/workload.sh)" ;;
    coreos-operator) echo "coreos etcd-operator $COREOS_OPERATOR_VERSION from the module proxy (scripts/lib/thirdparty.sh)" ;;
    curl) echo "tutum/curl's stand-in, Debian's curl (scripts/lib/thirdparty.sh)" ;;
    olm) echo "OLM and opm from the module proxy (scripts/build-olm.sh images)" ;;
    make\ *) echo "made by $1 (the e2e targets run it after this step)" ;;
    "") echo "no builder: loaded from Docker, pulled first when Docker lacks it" ;;
  esac
}

# build BUILDER: make its images (each builder caches what it made).
build() {
  case $1 in
    etcd\ *) make_etcd_release "${1#etcd }" ;;
    busybox) make_workload_busybox ;;
    seaweedfs) make_seaweedfs ;;
    coreos-operator) make_coreos_operator ;;
    curl) make_tutum_curl ;;
    olm) "$ETCDPROOF_ROOT/scripts/build-olm.sh" images >/dev/null ;;
  esac
}

# how_to_provide IMAGE: what to do about an image no builder makes and Docker
# cannot get.
how_to_provide() {
  local image=$1 repo v=${1##*:}
  for repo in "${ETCD_REPOSITORIES[@]}"; do
    if [[ $image == "$repo":v* ]]; then
      echo "    etcd $v is not one of ETCD_WORKLOAD_VERSIONS (scripts/lib/versions.sh): add it there with its"
      echo "    ETCD_DOCKERFILE_${v//./_} to build it here, or:"
    fi
  done
  echo "    pull or build it where you can, load it into this machine's Docker (docker load) and run this again:"
  echo "    this step then loads it into the cluster $CLUSTER_NAME."
}

list=$(etcdproof_cli profile images --traffic-image "${ETCDPROOF_IMAGE:-etcdproof/etcdproof:dev}" "$@")
mapfile -t images <<<"$list"
log "== images for $*: ${images[*]}"

builders=()
from_docker=()
for image in "${images[@]}"; do
  builder=$(builder_of "$image")
  if [[ -n $dry_run ]]; then
    printf '%-50s %s\n' "$image" "$(describe "$builder")"
  fi
  case $builder in
    "") from_docker+=("$image") ;;
    make\ *) ;;
    *) [[ " ${builders[*]} " == *" $builder "* ]] || builders+=("$builder") ;;
  esac
done
[[ -z $dry_run ]] || exit 0

# Images no builder makes, first: a missing one stops the step before the
# builds take minutes.
missing=()
for image in "${from_docker[@]}"; do
  image_exists "$image" && continue
  log "== $image: no builder here and not in Docker: pulling it"
  docker pull -q "$image" >/dev/null 2>&1 || missing+=("$image")
done
if ((${#missing[@]} > 0)); then
  for image in "${missing[@]}"; do
    log "$image: no builder here makes it, and Docker neither holds it nor can pull it. To provide it:"
    how_to_provide "$image" >&2
  done
  die "the runs of $* need ${#missing[@]} image(s) this machine cannot build or pull: ${missing[*]}"
fi

for builder in "${builders[@]}"; do build "$builder"; done

loaded=()
mirrored=()
for image in "${images[@]}"; do
  [[ $(builder_of "$image") == make\ * ]] && continue
  loaded+=("$image")
  [[ " $MIRRORED_IMAGES " == *" $image "* ]] && mirrored+=("$image")
done
if cluster_exists; then
  ((${#loaded[@]} == 0)) || step "run-images-load-$CLUSTER_NAME" "" load_images "${loaded[@]}"
  ((${#mirrored[@]} == 0)) || step "run-images-mirror" "" push_to_mirror "${mirrored[@]}"
else
  log "cluster $CLUSTER_NAME does not exist: images built, not loaded (make cluster, then make run-images)"
fi
printf '%s\n' "${loaded[@]}"
