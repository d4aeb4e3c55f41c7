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
	gofmt -w operator conformance

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

.PHONY: test-assets
test-assets: ## Build (once) kube-apiserver and etcd for the integration tests.
	scripts/test-assets.sh >/dev/null

.PHONY: test
test: test-assets ## Unit and integration tests (real kube-apiserver and etcd; no Docker).
	KUBEBUILDER_ASSETS="$$(scripts/test-assets.sh 2>/dev/null)" $(GO) test ./... -count=1
