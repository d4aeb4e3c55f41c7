# etcdproof: a conformance suite for etcd operators, and a reference operator.
# `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO ?= go
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(GO) tool controller-gen
K8S_VERSION ?= current
REPORT_DIR ?= $(CURDIR)/_report

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: fmt
fmt: ## Run gofmt on every Go file.
	gofmt -w operator conformance scripts examples

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

# `make test` runs the operator's integration tests on the current Kubernetes
# only, so that a fresh machine builds one kube-apiserver. The era legs are
# `make test-eras`: TEST_OLD_K8S (1.16, the oldest whose test assets are built)
# with the apiextensions v1beta1 CRD old clusters need and the v1beta1 Leases
# 1.13 has only, plus the suite's event recording (API servers before 1.27 have
# no streaming lists); and TEST_NEW_K8S (the newest). Setting one empty
# (TEST_OLD_K8S=) skips its leg.
TEST_OLD_K8S ?= v1.16.15
TEST_NEW_K8S ?= v1.37.2
TEST_ENV = KUBEBUILDER_ASSETS="$$(scripts/test-assets.sh 2>/dev/null)" ETCDPROOF_WEED="$$(scripts/build-seaweedfs.sh 2>/dev/null)" \
	ETCDPROOF_CHROMIUM="$${ETCDPROOF_CHROMIUM:-$$(scripts/ensure-tool.sh chromium 2>/dev/null)}"

.PHONY: test-assets
test-assets: ## Build (once) kube-apiserver, etcd and SeaweedFS weed for the integration tests on the current Kubernetes; install Debian's chromium for the report.html browser test.
	scripts/test-assets.sh >/dev/null

.PHONY: test
test: test-assets ## Unit and integration tests on the current Kubernetes (real kube-apiserver, etcd, S3 object store and headless Chromium; no Docker). ETCDPROOF_CHROMIUM=skip leaves out the browser test.
	$(TEST_ENV) $(GO) test ./... -count=1
	$(GO) test -tags etcdproof_unsafe ./operator/cmd/etcd-operator/ -run '^TestParseUnsafeFlags$$' -count=1

.PHONY: test-eras-assets
test-eras-assets: ## Build (once) the kube-apiservers of TEST_OLD_K8S and TEST_NEW_K8S for test-eras.
	$(if $(TEST_OLD_K8S),scripts/test-assets.sh $(TEST_OLD_K8S) >/dev/null)
	$(if $(TEST_NEW_K8S),scripts/test-assets.sh $(TEST_NEW_K8S) >/dev/null)

.PHONY: test-eras
test-eras: test-eras-assets ## The operator's integration tests on TEST_OLD_K8S (v1beta1 CRD and Leases, old event lists) and TEST_NEW_K8S.
	$(if $(TEST_OLD_K8S),KUBEBUILDER_ASSETS="$$(scripts/test-assets.sh $(TEST_OLD_K8S) 2>/dev/null)" ETCDPROOF_TEST_CRDS=legacy \
		$(GO) test ./operator/internal/controller/ ./operator/internal/kubecompat/ -count=1)
	$(if $(TEST_OLD_K8S),KUBEBUILDER_ASSETS="$$(scripts/test-assets.sh $(TEST_OLD_K8S) 2>/dev/null)" \
		$(GO) test ./conformance/framework/ -run '^TestClusterEvents' -count=1)
	$(if $(TEST_NEW_K8S),KUBEBUILDER_ASSETS="$$(scripts/test-assets.sh $(TEST_NEW_K8S) 2>/dev/null)" \
		$(GO) test ./operator/internal/controller/ -count=1)

##@ Lint

SHELL_SCRIPTS = $(shell git ls-files 'scripts/*.sh' 'scripts/**/*.sh' .ci/run)

.PHONY: lint
lint: ## gofmt, a tidy go.mod, go vet, shellcheck and actionlint.
	@out="$$(gofmt -l operator conformance scripts examples)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags etcdproof_unsafe ./operator/cmd/...
	scripts/ensure-tool.sh shellcheck >/dev/null
	shellcheck -x $(SHELL_SCRIPTS)
	$(GO) tool actionlint

##@ Operator

GENERATED_PATHS := operator/api manifests/crd manifests/crd-v1beta1 manifests/rbac/role.yaml manifests/cluster-wide/cluster_role.yaml \
	operator/internal/crdinstall/crds manifests/olm/bundle manifests/olm/catalog
# The Operator Framework walk-through (examples/memcached-operator): a small
# controller-runtime operator with its own API, RBAC and OLM bundles.
MEMCACHED_EXAMPLE := examples/memcached-operator
GENERATED_PATHS += $(MEMCACHED_EXAMPLE)/api/v1alpha1/zz_generated.deepcopy.go $(MEMCACHED_EXAMPLE)/config/crd/bases \
	$(MEMCACHED_EXAMPLE)/config/rbac/role.yaml $(MEMCACHED_EXAMPLE)/bundle
MEMCACHED_BUNDLE = $(GO) run ./operator/hack/bundle -package etcdproof-memcached-operator \
	-csv-base $(MEMCACHED_EXAMPLE)/config/manifests/bases/memcached-operator.clusterserviceversion.yaml \
	-install $(MEMCACHED_EXAMPLE)/config/default -samples $(MEMCACHED_EXAMPLE)/config/samples -out $(MEMCACHED_EXAMPLE)/bundle

# The API's resources (crdinstall.Resources).
CRD_RESOURCES := etcdclusters etcdbackups etcdrestores

# operator/internal/crdinstall/crds holds copies of the CRDs that the operator
# embeds for --create-crd (go:embed cannot reach manifests/).
.PHONY: manifests
manifests: ## Regenerate the CRDs (v1, the derived v1beta1, the operator's embedded copies) and the Roles from the API markers.
	$(CONTROLLER_GEN) crd paths=./operator/api/... output:crd:artifacts:config=manifests/crd
	$(CONTROLLER_GEN) rbac:roleName=etcd-operator paths=./operator/internal/controller/... output:rbac:artifacts:config=manifests/rbac
	$(GO) build -o $(BIN)/crd-v1beta1 ./operator/hack/crd-v1beta1
	for r in $(CRD_RESOURCES); do \
	  $(BIN)/crd-v1beta1 < manifests/crd/etcd.database.coreos.com_$$r.yaml > manifests/crd-v1beta1/etcd.database.coreos.com_$$r.yaml; \
	  cp manifests/crd/etcd.database.coreos.com_$$r.yaml operator/internal/crdinstall/crds/v1/$$r.yaml; \
	  cp manifests/crd-v1beta1/etcd.database.coreos.com_$$r.yaml operator/internal/crdinstall/crds/v1beta1/$$r.yaml; \
	done
	$(GO) run ./operator/hack/clusterrole < manifests/rbac/role.yaml > manifests/cluster-wide/cluster_role.yaml
	$(CONTROLLER_GEN) crd paths=./$(MEMCACHED_EXAMPLE)/api/... output:crd:artifacts:config=$(MEMCACHED_EXAMPLE)/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=memcached-operator paths=./$(MEMCACHED_EXAMPLE)/internal/controller/... output:rbac:artifacts:config=$(MEMCACHED_EXAMPLE)/config/rbac

.PHONY: generate
generate: ## Regenerate deepcopy functions of the API types.
	$(CONTROLLER_GEN) object paths=./operator/api/...
	$(CONTROLLER_GEN) object paths=./$(MEMCACHED_EXAMPLE)/api/...

# The OLM bundles of the reference operator and their file-based catalog
# (manifests/olm), generated from manifests/ after it is regenerated. Keep the
# releases in step with operator/hack/bundle/helpers_test.go.
.PHONY: bundle
bundle: manifests ## Regenerate the OLM bundles (0.1.0, and 0.2.0 replacing it) and their file-based catalog from manifests/.
	$(GO) run ./operator/hack/bundle -version 0.1.0 -image etcdproof/etcd-operator:dev
	$(GO) run ./operator/hack/bundle -version 0.2.0 -image etcdproof/etcd-operator:next -replaces 0.1.0
	$(GO) run ./operator/hack/bundle -catalog manifests/olm/catalog
	# The Memcached example's (keep in step with memcachedReleases in operator/hack/bundle/example_test.go).
	$(MEMCACHED_BUNDLE) -version 0.1.0 -image etcdproof/memcached-operator:v1
	$(MEMCACHED_BUNDLE) -version 0.2.0 -image etcdproof/memcached-operator:v2 -replaces 0.1.0
	$(MEMCACHED_BUNDLE) -catalog manifests/olm/catalog

# Operator Lifecycle Manager v0 in the kind cluster, for the reference-olm
# profile (manifests/olm/README.md): OLM and opm built from the Go module
# proxy into their upstream images, loaded into CLUSTER, and OLM's release
# install rendered (helm, as its release does) and applied.
.PHONY: olm
olm: ## Install OLM v0 into CLUSTER (K8S_VERSION; made first if missing): its images built from the module proxy and loaded, its release install rendered and applied.
	$(MAKE) cluster
	$(SUBSTRATE_ENV) scripts/build-olm.sh install

.PHONY: memcached-images
memcached-images: ## Build etcdproof/memcached:<Debian version> and etcdproof/memcached-operator:v1 and :v2; load them into CLUSTER.
	$(SUBSTRATE_ENV) scripts/build-memcached-image.sh
	for v in v1 v2; do \
	  CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w -X main.version=$$v" -o $(BIN)/memcached-operator/$$v/memcached-operator ./$(MEMCACHED_EXAMPLE)/cmd/memcached-operator && \
	  $(SUBSTRATE_ENV) scripts/build-image.sh $(BIN)/memcached-operator/$$v/memcached-operator etcdproof/memcached-operator:$$v || exit 1; \
	done

# The walk-through's end-to-end test: the Memcached operator installed
# through OLM at 0.1.0, a Memcached of 2, the upgrade to 0.2.0 approved; its
# memcached pods must neither restart nor be replaced.
.PHONY: e2e-memcached
e2e-memcached: ## Install the Memcached example through OLM and upgrade it (make olm first); no memcached pod may restart.
	$(MAKE) memcached-images
	ETCDPROOF_E2E_KUBECONFIG="$$($(SUBSTRATE_ENV) scripts/cluster-env.sh KUBECONFIG)" \
	  ETCDPROOF_E2E_CONTEXT="$$($(SUBSTRATE_ENV) scripts/cluster-env.sh KUBE_CONTEXT)" \
	  $(GO) test -count=1 -v -timeout 20m ./$(MEMCACHED_EXAMPLE)/test/e2e/

.PHONY: olm-images
olm-images: ## Build quay.io/operator-framework/olm and opm images from the module proxy (not loaded into a cluster).
	$(SUBSTRATE_ENV) scripts/build-olm.sh images

.PHONY: verify-generated
verify-generated: manifests generate bundle ## Fail when regenerating changes a generated file.
	git diff --exit-code -- $(GENERATED_PATHS)
	@untracked=$$(git ls-files --others --exclude-standard -- $(GENERATED_PATHS)); \
	  if [ -n "$$untracked" ]; then echo "generated but not committed: $$untracked"; exit 1; fi

.PHONY: build
build: ## Build the operator as a static binary: bin/etcd-operator.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(BIN)/etcd-operator ./operator/cmd/etcd-operator

.PHONY: run-operator
run-operator: ## Run the operator against the current kubeconfig, watching NAMESPACE (default: default).
	$(GO) run ./operator/cmd/etcd-operator --namespace=$${NAMESPACE:-default}

##@ Substrate

# The kind cluster the suite runs against; scripts/cluster-env.sh prints every path.
# Empty: etcdproof for the current Kubernetes, etcdproof-v1-16 for K8S_VERSION=1.16.
CLUSTER ?=
OPERATOR_IMAGE ?= etcdproof/etcd-operator:dev
SUBSTRATE_ENV := ETCDPROOF_CLUSTER=$(CLUSTER) K8S_VERSION=$(K8S_VERSION)

.PHONY: host
host: ## Install Docker & co. if missing, start dockerd, fix privileged containers if needed.
	scripts/host-setup.sh

.PHONY: cluster
cluster: ## Create (or reuse) the kind cluster CLUSTER; KIND_TOPOLOGY=3workers, ETCDPROOF_OFFLINE=1/0.
	$(SUBSTRATE_ENV) scripts/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Delete the kind cluster CLUSTER and its kubeconfig and audit log.
	$(SUBSTRATE_ENV) scripts/cluster-down.sh

.PHONY: cluster-env
cluster-env: ## Print the cluster's kubeconfig, context, audit log, kind and kubectl paths.
	@$(SUBSTRATE_ENV) scripts/cluster-env.sh

.PHONY: images
images: ## Build every etcd, busybox and third-party operator image from source and load them into the cluster (a run builds only its own: run-images).
	$(SUBSTRATE_ENV) scripts/build-workload-images.sh
	$(MAKE) thirdparty-images

.PHONY: thirdparty-images
thirdparty-images: ## Build quay.io/coreos/etcd-operator:v0.9.4 (Go module proxy) and tutum/curl, load them into the cluster and push MIRRORED_IMAGES to its registry mirror.
	$(SUBSTRATE_ENV) scripts/build-thirdparty-images.sh

# The "newer build" the operator-upgrade check rolls out: the same source linked
# with another version (--version prints it, the operator logs it at start), so
# the rollout swaps one binary for another. Under bin/next/ so the binary keeps
# its name: coreos' Deployment (reference-as-coreos) runs `etcd-operator`.
OPERATOR_NEXT_IMAGE ?= etcdproof/etcd-operator:next
# coreos v0.9.4's image also held these programs, which its backup and restore
# Deployments run by name: links to the operator's binary in its image.
OPERATOR_COREOS_PROGRAMS := etcd-backup-operator etcd-restore-operator
OPERATOR_NEXT_VERSION ?= next

.PHONY: image
image: ## Build etcdproof/etcd-operator:dev (OPERATOR_IMAGE) from bin/etcd-operator, and :next (OPERATOR_NEXT_IMAGE) for the operator-upgrade check; load both into the cluster.
	$(SUBSTRATE_ENV) scripts/build-image.sh $(BIN)/etcd-operator $(OPERATOR_IMAGE) $(OPERATOR_COREOS_PROGRAMS)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w -X main.version=$(OPERATOR_NEXT_VERSION)" -o $(BIN)/next/etcd-operator ./operator/cmd/etcd-operator
	$(SUBSTRATE_ENV) scripts/build-image.sh $(BIN)/next/etcd-operator $(OPERATOR_NEXT_IMAGE) $(OPERATOR_COREOS_PROGRAMS)

# The self-test's operator: the same source built with the known-bad
# --unsafe-* modes (build tag etcdproof_unsafe), which the released binary
# (make build, make image) refuses as unknown flags. Only the
# manifests/selftest overlays that pass such a flag run it.
OPERATOR_SELFTEST_IMAGE ?= etcdproof/etcd-operator:selftest

.PHONY: selftest-image
selftest-image: ## Build etcdproof/etcd-operator:selftest (OPERATOR_SELFTEST_IMAGE): the operator with its --unsafe-* self-test modes (build tag etcdproof_unsafe); load it into the cluster.
	CGO_ENABLED=0 $(GO) build -tags etcdproof_unsafe -trimpath -ldflags="-s -w" -o $(BIN)/selftest/etcd-operator ./operator/cmd/etcd-operator
	$(SUBSTRATE_ENV) scripts/build-image.sh $(BIN)/selftest/etcd-operator $(OPERATOR_SELFTEST_IMAGE) $(OPERATOR_COREOS_PROGRAMS)

.PHONY: smoke
smoke: ## Check the cluster: a 3-member etcd StatefulSet serves put/get through a Service.
	$(SUBSTRATE_ENV) scripts/smoke.sh

##@ Conformance

PROFILE ?= reference
ETCDPROOF_IMAGE ?= etcdproof/etcdproof:dev
# Checks to run, a Ginkgo label filter, e.g. LABEL_FILTER='create||scale', or the groups
# 'faults' and 'book' (default: all; etcdproof leaves out node-loss, drain and
# drain-during-rollout on a cluster with fewer schedulable nodes than members unless the
# filter names them: they need a worker node per member, see e2e-nodes).
LABEL_FILTER ?=
# Extra flags for `etcdproof run`, e.g. E2E_FLAGS=--skip-cleanup.
E2E_FLAGS ?=
E2E_FILTER_FLAG = $(if $(LABEL_FILTER),--label-filter '$(LABEL_FILTER)')
# e2e-nodes: the node checks (node-loss, drain) on their own 3-worker kind
# cluster, with their own report folder.
NODES_CLUSTER ?= etcdproof-nodes
NODES_REPORT_DIR ?= $(REPORT_DIR)/nodes
E2E_ENV := $(SUBSTRATE_ENV) ETCDPROOF_IMAGE=$(ETCDPROOF_IMAGE)

.PHONY: etcdproof
etcdproof: ## Build the conformance CLI (run, traffic, validate, selftest): bin/etcdproof.
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/etcdproof ./conformance/cmd/etcdproof

.PHONY: etcdproof-image
etcdproof-image: etcdproof ## Build etcdproof/etcdproof:dev (in-cluster traffic) and load it into the cluster.
	$(SUBSTRATE_ENV) scripts/build-image.sh $(BIN)/etcdproof $(ETCDPROOF_IMAGE)

# The profiles whose runs run-images builds for: make e2e's PROFILE, unless
# a target runs others (results and bench: RESULTS_PROFILES; e2e-selftest:
# --selftest, its known-bad profiles). Arguments of `etcdproof profile images`.
IMAGES_FOR ?= $(PROFILE)

.PHONY: run-images
run-images: ## Build only the images the runs of IMAGES_FOR (default PROFILE) need (bin/etcdproof profile images) and load them into the cluster; ETCDPROOF_IMAGES_DRY_RUN=1 prints each with what makes it.
	$(E2E_ENV) scripts/build-run-images.sh $(IMAGES_FOR)

.PHONY: e2e-substrate
e2e-substrate: ## Cluster up, the images the runs of IMAGES_FOR need, operator and etcdproof images loaded.
	$(MAKE) cluster
	$(MAKE) run-images IMAGES_FOR='$(IMAGES_FOR)'
	$(MAKE) build image
	$(MAKE) etcdproof-image

.PHONY: e2e
e2e: e2e-substrate ## Run every check but node-loss and drain (see e2e-nodes) against PROFILE (default reference); reports in REPORT_DIR.
	$(MAKE) e2e-run

.PHONY: e2e-run
e2e-run: ## Run the checks on the cluster as it is (no substrate step): PROFILE, REPORT_DIR, LABEL_FILTER (default all but node-loss and drain), E2E_FLAGS.
	$(E2E_ENV) scripts/run-conformance.sh run --profile $(PROFILE) --report-dir $(REPORT_DIR) $(E2E_FILTER_FLAG) $(E2E_FLAGS)

.PHONY: e2e-nodes
e2e-nodes: ## Run the node checks (node-loss, drain) on a 3-worker kind cluster NODES_CLUSTER (etcdproof-nodes); reports in NODES_REPORT_DIR.
	$(MAKE) e2e KIND_TOPOLOGY=3workers CLUSTER=$(NODES_CLUSTER) LABEL_FILTER='node-loss || drain || drain-during-rollout' REPORT_DIR=$(NODES_REPORT_DIR)

.PHONY: e2e-nodes-selftest
e2e-nodes-selftest: ## Prove the node checks' known-bad profiles fail, on the 3-worker cluster NODES_CLUSTER.
	$(MAKE) e2e-selftest KIND_TOPOLOGY=3workers CLUSTER=$(NODES_CLUSTER) LABEL_FILTER='node-loss || drain || drain-during-rollout' REPORT_DIR=$(NODES_REPORT_DIR)

# Profiles compared by `make results` and `make bench` (the first is the bench baseline).
RESULTS_PROFILES ?= reference coreos-v0.9.4 reference-as-coreos
RESULTS_DIR ?= $(CURDIR)/_report/results
BENCH_RUNS ?= 3

results results-nodes bench: IMAGES_FOR = $(RESULTS_PROFILES)

.PHONY: results
results: e2e-substrate ## Run RESULTS_PROFILES on the cluster and regenerate docs/results.md and docs/results.html (keeps other K8S_VERSIONs' runs and the node checks' runs).
	$(E2E_ENV) RESULTS_PROFILES='$(RESULTS_PROFILES)' RESULTS_DIR=$(RESULTS_DIR) scripts/results.sh

.PHONY: results-nodes
results-nodes: ## Run RESULTS_PROFILES' node checks (node-loss, drain) on the 3-worker cluster NODES_CLUSTER and regenerate docs/results.md and docs/results.html.
	$(MAKE) e2e-substrate KIND_TOPOLOGY=3workers CLUSTER=$(NODES_CLUSTER) IMAGES_FOR='$(IMAGES_FOR)'
	$(MAKE) --no-print-directory results-nodes-run CLUSTER=$(NODES_CLUSTER)

.PHONY: results-nodes-run
results-nodes-run:
	$(E2E_ENV) RESULTS_PROFILES='$(RESULTS_PROFILES)' RESULTS_DIR=$(RESULTS_DIR) RESULTS_RUN=nodes scripts/results.sh

.PHONY: bench
bench: e2e-substrate ## Time RESULTS_PROFILES over BENCH_RUNS rounds on one cluster; medians and ratios in REPORT_DIR/bench.
	$(E2E_ENV) scripts/run-conformance.sh bench --runs $(BENCH_RUNS) --report-dir $(REPORT_DIR)/bench $(E2E_FLAGS) $(RESULTS_PROFILES)

e2e-selftest: IMAGES_FOR = --selftest

.PHONY: e2e-selftest
e2e-selftest: e2e-substrate ## Prove each known-bad profile (selftest-*.yaml) fails its intended checks, one run per check (node-loss and drain: e2e-nodes-selftest).
	$(MAKE) selftest-image
	$(E2E_ENV) scripts/run-conformance.sh selftest --report-dir $(REPORT_DIR)/selftest $(E2E_FILTER_FLAG) $(E2E_FLAGS)
