# perfgate — the two set-up commands are `make demo` and `make test`.
export PERFGATE_CACHE ?= $(HOME)/.cache/perfgate
GO ?= go
TESTFLAGS ?= -timeout 30m

.PHONY: all demo test test-long gofmt fmt vet staticcheck lint fixtures bench build clean fuzz flakehunt image

all: build

build:
	$(GO) build ./...

## demo: mock server + load + report on embedded defaults (no network, no downloads).
demo:
	$(GO) run ./cmd/perfgate demo

## image: perfgate's container image as an OCI archive, built without a daemon
## (go-containerregistry; docs/kubernetes.md#the-container-image). IMAGE_OUT names the file.
image:
	$(GO) run ./scripts/image -o $${IMAGE_OUT:-perfgate-image.tar}

## fixtures: fetch oracle npm packages and tokenizer files into $(PERFGATE_CACHE) (idempotent).
fixtures:
	bash scripts/fixtures.sh

## gofmt: gofmt -l with zero findings (seconds: make test runs it).
gofmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt -l:"; echo "$$out"; exit 1; fi

## fmt: gofmt and goimports (pinned as a Go tool in go.mod) with zero findings. Building
## goimports on a fresh machine takes ~25 s, so make test-long runs it, not make test.
fmt: gofmt
	@out=$$($(GO) tool goimports -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "goimports -l:"; echo "$$out"; exit 1; fi

## vet: every go vet analyser (also with -tags hftokenizers, and on testmod/external). go test
## runs vet's high-confidence subset by itself; make test-long (which CI runs too) runs all of
## them. testmod's full vet analyses every dependency afresh (~110 s on a fresh 2-core machine).
vet:
	$(GO) vet ./...
	$(GO) vet -tags hftokenizers ./tokenizer/...
	cd testmod/external && $(GO) vet ./...

## staticcheck: zero findings (pinned as a Go tool in go.mod). On a fresh machine it analyses
## every dependency from source (minutes on 2 cores), so make test-long runs it, not make test.
staticcheck:
	$(GO) tool staticcheck ./...

## lint: everything a reviewer's linters check (fmt + vet + staticcheck).
lint: fmt vet staticcheck

## test: gofmt + the whole suite with -short (go test's own vet checks) through gotestsum (fixtures fetched first; the
## long tests skip or run trimmed: testutil.Long, testutil.Short), then the module outside
## perfgate (testmod/external: its own go.mod, a replace directive to this tree) that uses
## the public API as a user's module does. Every fuzz target's seed corpus runs as a test.
test: fixtures gofmt
	$(GO) tool gotestsum --format pkgname-and-test-fails --junitfile $${JUNIT_FILE:-/dev/null} -- -short $(TESTFLAGS) ./...
	cd testmod/external && $(GO) test -short $(TESTFLAGS) ./...

## test-long: what make test leaves out, so that CI (which runs both) loses nothing:
## goimports, every go vet analyser and staticcheck, the long tests at full size (scripts/testlong.sh), then every fuzz target
## for FUZZTIME (2s), so that a parser regression shows in CI.
test-long: fixtures fmt vet staticcheck
	bash scripts/testlong.sh
	FUZZTIME=$${FUZZTIME:-2s} bash scripts/fuzz.sh

## fuzz: every fuzz target for FUZZTIME each (default 1m; FUZZ=pattern narrows);
## see docs/fuzzing.md.
fuzz:
	FUZZTIME=$${FUZZTIME:-1m} bash scripts/fuzz.sh

## flakehunt: the whole suite RUNS (3) times on a fresh clone, then LOADED (1) more beside a CPU
## burner on every CPU but one; prints failures per test and the slowest tests (docs/development.md).
flakehunt:
	bash scripts/flakehunt.sh

## bench: Go benchmarks plus the peer scripts under bench/ that print ratios.
bench: fixtures
	bash bench/run.sh

clean:
	rm -rf bin demo-out
