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
DATA_DIR      ?= data
LISTEN        ?= 127.0.0.1:8080
TEST_TIMEOUT  ?= 20m

.PHONY: all build run test bench tools apt-deps npm-deps lint clean

all: build

# VERSION is what `netintel version` prints (docs/operators.md).
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o netintel ./cmd/netintel

run: build
	./netintel run --config pipeline.yaml --data-dir $(DATA_DIR) --listen $(LISTEN)

$(TOOLS)/versitygw:
	GOBIN=$(TOOLS) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

$(TOOLS)/nats-server:
	GOBIN=$(TOOLS) $(GO) install github.com/nats-io/nats-server/v2@$(NATS_VERSION)

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

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

# npm packages the tests use (DuckDB reads our Parquet files).
npm-deps:
	@if [ -f tools/npm/package.json ] && [ ! -d tools/npm/node_modules ]; then \
	  cd tools/npm && npm install --no-audit --no-fund --loglevel=error; fi

tools: $(TOOLS)/versitygw $(TOOLS)/nats-server $(TOOLS)/staticcheck apt-deps npm-deps

lint: $(TOOLS)/staticcheck
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...

test: tools lint
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# System benchmarks size their own work and run once (-benchtime 1x); the
# micro benchmarks (testutil.Micro) skip that pass and run for a fixed time.
MICRO_BENCH = BenchmarkRulesMatch|BenchmarkDocCodec|BenchmarkStateCache|BenchmarkApply|BenchmarkDecodeObs|BenchmarkPattern|BenchmarkKeys_EncryptFile|BenchmarkLookupHandler|BenchmarkAppendLookup

bench: tools
	NETINTEL_BENCH_PASS=system $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...
	NETINTEL_BENCH_PASS=micro $(GO) test -run '^$$' -bench '$(MICRO_BENCH)' -benchtime 2s -benchmem -timeout 20m ./...

clean:
	rm -rf netintel $(DATA_DIR)
