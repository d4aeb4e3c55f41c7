#!/usr/bin/env bash
# Smoke test of the substrate: a 3-member etcd StatefulSet from the locally
# built image (pod DNS, PVCs, ClusterIP Service) answers put/get through its
# Service. Cleans up its namespace unless ETCDPROOF_SMOKE_KEEP=1.
# usage: smoke.sh      env: K8S_VERSION, ETCDPROOF_CLUSTER (see cluster-up.sh)
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/cluster.sh
source "$ETCDPROOF_ROOT/scripts/lib/cluster.sh"

NS=etcdproof-smoke
# The newest etcd release built by `make images`.
ETCD_IMAGE=quay.io/coreos/etcd:${ETCD_WORKLOAD_VERSIONS##* }
WAIT_TIMEOUT=${ETCDPROOF_WAIT_TIMEOUT:-5m}
cluster_exists || die "cluster $CLUSTER_NAME does not exist: run make cluster first"

kube() { "$KUBECTL" --kubeconfig "$CLUSTER_KUBECONFIG" --context "$KUBE_CONTEXT" "$@"; }

manifest() {
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: etcd, namespace: $NS}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: {app: etcd}
  ports: [{name: peer, port: 2380}, {name: client, port: 2379}]
---
apiVersion: v1
kind: Service
metadata: {name: etcd-client, namespace: $NS}
spec:
  selector: {app: etcd}
  ports: [{name: client, port: 2379}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd, namespace: $NS}
spec:
  serviceName: etcd
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec:
      containers:
        - name: etcd
          image: $ETCD_IMAGE
          imagePullPolicy: Never
          # Upstream etcd images have no shell: Kubernetes expands \$(POD_NAME).
          command: [etcd]
          args:
            - --name=\$(POD_NAME)
            - --data-dir=/var/lib/etcd/data
            - --listen-peer-urls=http://0.0.0.0:2380
            - --listen-client-urls=http://0.0.0.0:2379
            - --advertise-client-urls=http://\$(POD_NAME).etcd.$NS.svc:2379
            - --initial-advertise-peer-urls=http://\$(POD_NAME).etcd.$NS.svc:2380
            - --initial-cluster=etcd-0=http://etcd-0.etcd.$NS.svc:2380,etcd-1=http://etcd-1.etcd.$NS.svc:2380,etcd-2=http://etcd-2.etcd.$NS.svc:2380
            - --initial-cluster-state=new
            - --initial-cluster-token=smoke
          env:
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          readinessProbe:
            httpGet: {path: /health, port: 2379}
            periodSeconds: 2
          volumeMounts: [{name: data, mountPath: /var/lib/etcd}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 64Mi}}
YAML
}

# The image is built by `make images`; loading it here (1-3 s) lets the smoke
# test run on a fresh cluster of any release.
load_image() {
  docker image inspect "$ETCD_IMAGE" >/dev/null 2>&1 || die "image $ETCD_IMAGE missing: run make images first"
  load_images "$ETCD_IMAGE"
}

deploy() {
  kube create namespace "$NS" --dry-run=client -o yaml | kube apply -f -
  manifest | kube apply -f -
  kube -n "$NS" rollout status statefulset/etcd --timeout="$WAIT_TIMEOUT"
}

# etcdctl NAME ARGS...: run etcdctl ARGS in a one-shot pod NAME (the etcd
# image has no shell to keep a pod around for exec) and print its output.
etcdctl() {
  local name=$1 phase=""; shift
  kube -n "$NS" run "$name" --image="$ETCD_IMAGE" --image-pull-policy=Never --restart=Never \
    --command -- etcdctl --endpoints=http://etcd-client:2379 "$@" >/dev/null
  for ((i = 0; i < 120; i++)); do
    phase=$(kube -n "$NS" get pod "$name" -o jsonpath='{.status.phase}')
    [[ $phase == Succeeded || $phase == Failed ]] && break
    sleep 1
  done
  kube -n "$NS" logs "$name"
  [[ $phase == Succeeded ]] || die "etcdctl $* in pod $name: phase '$phase'"
}

# Through the ClusterIP Service, from a separate pod: DNS, kube-proxy and the CNI all count.
put_get() {
  local value got members
  value="smoke-$(date +%s)"
  etcdctl etcdctl-put put /etcdproof/smoke "$value"
  got=$(etcdctl etcdctl-get get --print-value-only /etcdproof/smoke)
  [[ "$got" == "$value" ]] || die "get returned '$got', want '$value'"
  members=$(etcdctl etcdctl-members member list)
  echo "$members"
  [[ $(grep -c ', started, ' <<<"$members") == 3 ]] || die "want 3 started etcd members"
}

cleanup() { kube delete namespace "$NS" --wait=true --timeout="$WAIT_TIMEOUT"; }

step smoke-load "" load_image
step smoke-deploy "" deploy
step smoke-put-get "" put_get
if [[ "${ETCDPROOF_SMOKE_KEEP:-0}" != 1 ]]; then step smoke-cleanup "" cleanup; fi
log "smoke test passed: 3-member etcd ($ETCD_IMAGE) served put/get through Service etcd-client"
