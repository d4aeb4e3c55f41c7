# shellcheck shell=bash
# The registry mirror: one Distribution registry container per machine, on
# kind's Docker network, that every cluster's containerd asks first for
# docker.io images (cluster.Spec.RegistryMirror writes the nodes' hosts.toml).
# Offline, it is the only way a pod whose image is pulled on every start
# (imagePullPolicy Always) can run; MIRRORED_IMAGES (versions.sh) are pushed
# to it. It outlives clusters: its content is cached on the host.

# shellcheck source=scripts/lib/gomodule.sh
source "$ETCDPROOF_ROOT/scripts/lib/gomodule.sh"

REGISTRY_MIRROR_NAME=etcdproof-registry
# How the nodes reach it (kind's network resolves container names) ...
# shellcheck disable=SC2034 # read by the scripts that source this file
REGISTRY_MIRROR_ADDRESS=$REGISTRY_MIRROR_NAME:5000
# ... and how this host pushes to it (Docker pushes to loopback over HTTP).
REGISTRY_MIRROR_PUSH=127.0.0.1:5001

# registry_image: REGISTRY_IMAGE, shaped like upstream's registry image
# (registry binary, its config-dev.yml as /etc/distribution/config.yml,
# ENTRYPOINT registry, CMD serve), on our busybox base instead of Alpine.
registry_image() {
  local bin ctx="$ETCDPROOF_CACHE/images/ctx/registry" src
  bin=$("$ETCDPROOF_ROOT/scripts/build-registry.sh")
  src=$(module_source "github.com/distribution/distribution/v3@$REGISTRY_VERSION")
  ensure_busybox_image
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp "$bin" "$ctx/registry"
  cp "$src/cmd/registry/config-dev.yml" "$ctx/config.yml"
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $BUSYBOX_IMAGE
COPY config.yml /etc/distribution/config.yml
COPY registry /bin/registry
VOLUME ["/var/lib/registry"]
EXPOSE 5000
ENTRYPOINT ["registry"]
CMD ["serve", "/etc/distribution/config.yml"]
DOCKERFILE
  build_context_image "$REGISTRY_IMAGE" "$ctx"
  rm -rf "$ctx"
}

# mirror_answers: the registry serves its API on the push address.
mirror_answers() { curl -fsS -o /dev/null --max-time 2 "http://$REGISTRY_MIRROR_PUSH/v2/"; }

# ensure_mirror: the mirror container runs (started on kind's network, which
# the first kind cluster creates) and answers.
ensure_mirror() {
  local running i
  image_step registry-image "$REGISTRY_IMAGE" registry_image
  running=$(docker inspect -f '{{.State.Running}} {{.Config.Image}}' "$REGISTRY_MIRROR_NAME" 2>/dev/null || true)
  if [[ "$running" != "true $REGISTRY_IMAGE" ]]; then
    docker rm -f "$REGISTRY_MIRROR_NAME" >/dev/null 2>&1 || true
    mkdir -p "$ETCDPROOF_CACHE/registry/data"
    docker run -d --restart=always --name "$REGISTRY_MIRROR_NAME" --network kind \
      -p "$REGISTRY_MIRROR_PUSH:5000" -v "$ETCDPROOF_CACHE/registry/data:/var/lib/registry" \
      "$REGISTRY_IMAGE" >/dev/null
  fi
  for ((i = 0; i < 60; i++)); do
    mirror_answers && return 0
    sleep 0.5
  done
  die "the registry mirror $REGISTRY_MIRROR_NAME does not answer on http://$REGISTRY_MIRROR_PUSH/v2/ (docker logs $REGISTRY_MIRROR_NAME)"
}

# push_to_mirror IMAGE...: each local IMAGE (docker.io names, e.g.
# tutum/curl:latest) into the mirror under the same repository and tag.
push_to_mirror() {
  local image
  ensure_mirror
  for image in "$@"; do
    docker tag "$image" "$REGISTRY_MIRROR_PUSH/$image"
    docker push -q "$REGISTRY_MIRROR_PUSH/$image" >/dev/null
    docker rmi "$REGISTRY_MIRROR_PUSH/$image" >/dev/null
  done
}
