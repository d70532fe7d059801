# netintel: `make run` runs the system on its embedded defaults; `make test`
# installs what the tests need and runs them all. Nothing here downloads a
# prebuilt binary: Go tools come from the module proxy, the rest from Debian
# and npm.

GO            ?= go
TOOLS         := $(CURDIR)/.tools/bin
export NETINTEL_TOOLS := $(TOOLS)
NATS_VERSION  := $(shell $(GO) list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
VERSITYGW_VERSION   := v1.8.0
STATICCHECK_VERSION := v0.8.2
OAPI_CODEGEN_VERSION := v2.8.2
# promtool from the Prometheus module (v0.316.0 is Prometheus 3.x); the
# build takes several minutes once. Debian's package `prometheus` (2.42)
# is the fallback when it cannot be built.
PROMTOOL_VERSION    := v0.316.0
# VERSION is what `netintel version` prints and Parquet files carry (docs/operators.md).
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DATA_DIR      ?= data
LISTEN        ?= 127.0.0.1:8080
TEST_TIMEOUT  ?= 20m

.PHONY: all build run test bench scale tools apt-deps npm-deps lint clean oapiclient

all: build

build:
	$(GO) build -ldflags "-X github.com/netintel/netintel/internal/buildinfo.version=$(VERSION)" -o netintel ./cmd/netintel

run: build
	./netintel run --config pipeline.yaml --data-dir $(DATA_DIR) --listen $(LISTEN)

$(TOOLS)/versitygw:
	GOBIN=$(TOOLS) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

$(TOOLS)/nats-server:
	GOBIN=$(TOOLS) $(GO) install github.com/nats-io/nats-server/v2@$(NATS_VERSION)

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# oapi-codegen generates test/oapiclient from the customer OpenAPI document.
$(TOOLS)/oapi-codegen:
	GOBIN=$(TOOLS) $(GO) install github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$(OAPI_CODEGEN_VERSION)

# promtool checks /metrics (promtool check metrics) and the alert rules in
# deploy/prometheus (promtool check rules). Built from source; when that
# fails, the Debian package's promtool is linked instead.
$(TOOLS)/promtool:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION) || { \
	  echo "promtool did not build; using Debian's package prometheus"; \
	  command -v promtool >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }; \
	  ln -sf "$$(command -v promtool)" $(TOOLS)/promtool; }

# The committed Go client of the customer API (test/oapiclient); the test
# TestRun_CustomerOpenAPIClients fails when the served document would
# generate another one.
oapiclient: $(TOOLS)/oapi-codegen
	cd test/oapiclient && $(TOOLS)/oapi-codegen -config config.yaml -o client.gen.go ../../api/apigw/openapi.json

# Debian packages the tests read our files with (mmdblookup), drive pages
# with (chromium). Installed only when missing.
apt-deps:
	@missing=""; \
	command -v mmdblookup >/dev/null || missing="$$missing mmdb-bin"; \
	command -v chromium >/dev/null || missing="$$missing chromium chromium-driver"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# npm packages the tests use (DuckDB reads our Parquet files;
# openapi-typescript and tsc build a TypeScript client from the customer
# OpenAPI document). Installed again whenever package.json or the lock
# file changes.
npm-deps: tools/npm/node_modules/.package-lock.json

tools/npm/node_modules/.package-lock.json: tools/npm/package.json tools/npm/package-lock.json
	cd tools/npm && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

tools: $(TOOLS)/versitygw $(TOOLS)/nats-server $(TOOLS)/staticcheck $(TOOLS)/oapi-codegen $(TOOLS)/promtool apt-deps npm-deps

lint: $(TOOLS)/staticcheck
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...

test: tools lint
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# System benchmarks size their own work and run once (-benchtime 1x); the
# micro benchmarks (testutil.Micro) skip that pass and run for a fixed time.
MICRO_BENCH = BenchmarkRulesMatch|BenchmarkDocCodec|BenchmarkStateCache|BenchmarkApply|BenchmarkDecodeObs|BenchmarkPattern|BenchmarkKeys_EncryptFile|BenchmarkLookupHandler|BenchmarkAppendLookup|BenchmarkPcap

bench: tools
	NETINTEL_BENCH_PASS=system $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...
	NETINTEL_BENCH_PASS=micro $(GO) test -run '^$$' -bench '$(MICRO_BENCH)' -benchtime 2s -benchmem -timeout 20m ./...

# The scale benchmark (docs/benchmarks/scale.md): SCALE_N addresses through
# nats-server, an enrich worker, publish and the API, each its own process;
# per-process RSS, rates, publish and API load figures, disk, into
# SCALE_REPORT and stdout. SCALE_MODE=cluster runs 3 nodes at R3;
# SCALE_SHARDS sets enrich.shards; SCALE_REPLICAS=1 makes the cluster R1
# with the shards placed one node each. 10,000,000 addresses need ~10 GiB.
SCALE_N       ?= 10000000
SCALE_MODE    ?= single
SCALE_REPORT  ?= scale-report.md

scale: build $(TOOLS)/nats-server
	SCALE_N=$(SCALE_N) SCALE_MODE=$(SCALE_MODE) SCALE_SHARDS=$(SCALE_SHARDS) SCALE_REPLICAS=$(SCALE_REPLICAS) SCALE_REPORT=$(SCALE_REPORT) \
	  SCALE_BIN=./netintel SCALE_NATS_SERVER=$(TOOLS)/nats-server $(GO) run ./tools/scale

clean:
	rm -rf netintel $(DATA_DIR)
