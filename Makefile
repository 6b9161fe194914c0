# mco: every target a developer or CI needs. `make test` and `make demo` are the two entry points.
SHELL := /usr/bin/env bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
# -s -w: no symbol table or DWARF (a third of each binary); stack traces and profiles keep
# their function names and lines (the runtime's own tables), only a debugger loses them.
LDFLAGS := -s -w -X github.com/mco-dev/mco/internal/version.Version=$(VERSION) \
           -X github.com/mco-dev/mco/internal/version.Commit=$(COMMIT)
# Integration tests start real control planes; on 2 cores, more parallel packages only thrash.
# test/e2e, test/e2e/stranded, test/chaos and test/e2e/images run side by side, each on a dev network of its own
# (network slots, test/clustertest); a second run of the same suite waits for its slot's lock.
TEST_FLAGS ?= -p 2 -timeout 45m
# The agent's test failpoints (internal/daemon/failpoint: SIGKILL, pause or hold at a step) exist
# only in builds with the tag failpoints. Test binaries always have it (TEST_TAGS): the tests
# that arm a failpoint carry //go:build failpoints, so a plain `go test` leaves them out rather
# than failing. bin/mco-node has it only when built for `make test` or `make chaos`, whose
# clusters' agent pods (bin/mco-image.tar) are armed by test/e2e and test/chaos: a
# target-specific NODE_TAGS, which make also uses for the prerequisites (build, image) it makes
# for that target. `make build`, `make image` and `make demo` on their own, and the Containerfile
# (the release image), build the agent without. Run `make test` alone: in `make build test`,
# build is made once, for itself, without failpoints (test/e2e and test/chaos then say so).
TEST_TAGS := failpoints
NODE_TAGS := nodeagent
GO_DIRS := $(wildcard cmd internal test bench hack)

.PHONY: all build install-plugin tools crds test unit demo vet fmt clean help bench-rollout bench-render bench-first-drain chaos fuzz image image-lock soak

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/mco (the CLI, with `mco dev`), bin/mco-node (agent, first boot, dev platform facts), bin/mco-server, and the image's mco without the dev harness (bin/image/)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/mco ./cmd/mco
	CGO_ENABLED=0 $(GO) build -trimpath -tags $(NODE_TAGS) -ldflags '$(LDFLAGS)' -o bin/mco-node ./cmd/mco
	CGO_ENABLED=0 $(GO) build -trimpath -tags mcoserver -ldflags '$(LDFLAGS)' -o bin/mco-server ./cmd/mco
	mkdir -p bin/image
	CGO_ENABLED=0 $(GO) build -trimpath -tags nodev -ldflags '$(LDFLAGS)' -o bin/image/mco ./cmd/mco
	ln -f bin/mco-node bin/mco-server bin/image/
	ln -sf mco bin/kubectl-mco
	ln -sf mco bin/kubectl_complete-mco

# kubectl runs kubectl-mco from PATH as `kubectl mco`, and kubectl_complete-mco to complete it;
# both are links to bin/mco, which answers to the name it is run by.
PLUGIN_DIR ?= $(HOME)/.local/bin
install-plugin: build ## link bin/mco into PLUGIN_DIR (~/.local/bin) as the kubectl plugin kubectl-mco, with its completion
	mkdir -p $(PLUGIN_DIR)
	ln -sf $(abspath bin/mco) $(PLUGIN_DIR)/kubectl-mco
	ln -sf $(abspath bin/mco) $(PLUGIN_DIR)/kubectl_complete-mco

tools: ## build kube-apiserver, etcd, kubectl, ignition into bin/tools (only when pins change)
	@hack/tools/ensure.sh

crds: ## copy CRD manifests from the pinned github.com/openshift/api into config/crd
	@hack/sync-crds.sh

# What `make vet` runs, as one shell command, so that `make test` can run it beside the cluster
# suites (they need only the binaries and the image) and still fail when it fails.
VET_CMD = $(GO) vet ./... && \
	$(GO) vet -tags $(TEST_TAGS) ./internal/daemon/... && \
	$(GO) vet -tags nodeagent ./cmd/mco && \
	$(GO) vet -tags mcoserver ./cmd/mco && \
	$(GO) vet -tags nodev ./cmd/mco && \
	$(GO) run ./hack/layering && \
	files=$$(gofmt -l $(GO_DIRS)) && { test -z "$$files" || { echo "gofmt needed: $$files"; exit 1; }; }
vet: ## go vet, the layering rules (hack/layering) and gofmt check
	$(VET_CMD)

fmt:
	gofmt -w $(GO_DIRS)

# The cluster suites (real machines, mostly waiting on reboots and timers) take most of the
# time, so they start first, three at once on their own dev networks (-p 3; test/e2e/images, the
# shortest, takes the first slot another frees: four at once on 2 cores slowed every suite by a
# fifth), and every other package runs beside them, instead of after them in import-path order. The failpoint package
# runs once more without the tag: its release build (failpoint_off.go) must neither read an
# arming nor kill. `make vet` runs beside them too (VET_CMD), not before: a failed vet still
# fails the target.
CLUSTER_PKGS := ./test/e2e/ ./test/e2e/stranded/ ./test/chaos/ ./test/e2e/images/
test: NODE_TAGS := nodeagent,$(TEST_TAGS)
test: tools build image ## unit, integration, e2e and chaos tests, and make vet: a real kube-apiserver and etcd, real machines with real kubelets, mco's own image
	@$(GO) test -tags $(TEST_TAGS) $(TEST_FLAGS) -p 3 $(CLUSTER_PKGS) & clusters=$$!; \
	( $(VET_CMD) ); vetted=$$?; \
	$(GO) test -tags $(TEST_TAGS) $(TEST_FLAGS) $$($(GO) list ./... | grep -v -E '/test/(e2e|e2e/stranded|e2e/images|chaos|soak)$$'); others=$$?; \
	(cd hack/tools && $(GO) test ./pause/); pause=$$?; \
	$(GO) test ./internal/daemon/failpoint/; released=$$?; \
	wait $$clusters; clustered=$$?; \
	test $$vetted -eq 0 && test $$others -eq 0 && test $$pause -eq 0 && test $$released -eq 0 && test $$clustered -eq 0

unit: ## only the tests that need no control plane (fast)
	$(GO) test -short -tags $(TEST_TAGS) ./...

demo: build tools image ## the main job (see README for what it shows today)
	@hack/demo.sh

# Go fuzz targets, one per parser that reads outside input, as package:Target; `make test` runs
# each one's seed corpus (f.Add and testdata/fuzz/<Target>). FUZZFLAGS adds flags, e.g.
# FUZZFLAGS='-parallel 1' on a shared machine.
FUZZTIME ?= 1m
FUZZFLAGS ?=
FUZZ_TARGETS := \
	./internal/server:FuzzNegotiateVersion \
	./internal/ignition:FuzzParse \
	./internal/manifest:FuzzManifestDecode \
	./internal/manifest:FuzzButane \
	./internal/bootimage:FuzzUpdateProviderSpec \
	./internal/bootimage:FuzzStreamSelection \
	./internal/daemon/apply:FuzzJournalDecode \
	./internal/rollout:FuzzPoolSelectors \
	./internal/etcdindex:FuzzRefersToIndex
fuzz: ## run each fuzz target for FUZZTIME (1m), one after the other; failing inputs land in testdata/fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*} name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS); \
	done

# The chaos suite's long form; `make test` runs one round of each fault but the long ones.
# MCO_CHAOS_FAULTS chooses faults by name (comma-separated); MCO_CHAOS_SEED=N replays the random
# choices of a run (every run prints its seed). It builds the image too: its agent pods are the
# ones armed, and need the failpoints (NODE_TAGS above).
MCO_CHAOS_ROUNDS ?= 10
MCO_CHAOS_FAULTS ?= all
chaos: NODE_TAGS := nodeagent,$(TEST_TAGS)
chaos: build tools image ## chaos suite, long form: MCO_CHAOS_ROUNDS (10) rounds of every fault on real machines (about an hour on 2 cores)
	MCO_CHAOS_ROUNDS=$(MCO_CHAOS_ROUNDS) MCO_CHAOS_FAULTS=$(MCO_CHAOS_FAULTS) $(GO) test -tags $(TEST_TAGS) ./test/chaos/ -run . -v -count=1 -timeout 120m

# test/soak is not part of make test: its rounds repeat test/e2e's one-apply step on fresh
# clusters to catch a rare failure (issue 37); make vet compiles it.
MCO_SOAK_ROUNDS ?= 20
soak: build tools image ## issue 37's one-apply rollout on MCO_SOAK_ROUNDS (20) fresh 3-worker clusters on network slot 3; a failed round's state lands in MCO_SOAK_DIR ($$TMPDIR/mco-soak) (~2 min a round)
	MCO_SOAK_ROUNDS=$(MCO_SOAK_ROUNDS) $(GO) test ./test/soak/ -run . -v -count=1 -timeout 240m

bench-rollout: build tools ## 1,000-node rebootless rollout through bin/mco controller, agents simulated as real ones write: time, writes per node update by kind, CPU, RSS (~2 min)
	$(GO) run ./bench/rollout

bench-render: build ## mco render as a whole process on 200 MachineConfigs with 4,000 files: min, median, max wall time and peak RSS over 15 runs
	$(GO) run ./bench/render

bench-first-drain: build tools ## kubectl apply of 5 MachineConfigs to the first drain request, bin/mco controller and the real agent (root; ~1 min)
	$(GO) run ./bench/firstdrain

# The mco image without a container engine or registry (hack/image, internal/dev/image): Debian's
# files for the agent's pod at the versions hack/image/debian.lock pins, mco (without the dev
# harness), mco-node and mco-server from `make build` (bin/image/); stamped with the commit's time, so the same commit gives the same digest.
image: build ## build bin/mco-image.tar (docker-archive, ghcr.io/mco-dev/mco:$(VERSION) and :latest) without a registry; prints its digest
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) \
		$(GO) run ./hack/image -version $(VERSION) -commit $(COMMIT) -out bin/mco-image.tar

image-lock: ## pin the image's Debian packages anew in hack/image/debian.lock (when one left the mirror, or for updates)
	$(GO) run ./hack/image lock

clean:
	rm -rf bin
