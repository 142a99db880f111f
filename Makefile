# Fjord — one binary: Kafka-compatible broker, Connect runtime, connectors, mirror.
#
#   make run     start `fjord dev` (broker + HTTP) with data under ./data
#   make test    install what the tests need, then run every test
#   make bench   side-by-side benchmarks (Fjord vs Apache Kafka 4.4 vs kfake; Connect runtime vs franz-go;
#                3 brokers RF 3 acks=all vs 1 broker RF 1 acks=1, and failover time; Postgres CDC vs
#                pg_recvlogical and Debezium; the S3 sink vs a raw PUT of the same bytes into MinIO;
#                fjord mirror vs a plain consume and Kafka's MirrorMaker 2)

GO      ?= go
BIN     := bin/fjord
PKGS    := ./...
# Debian packages the tests drive Fjord with: real clients nobody here wrote,
# the real PostgreSQL 15 server the Postgres connectors are tested against, and
# the headless Chromium the console's end-to-end test drives.
TEST_DEBS := postgresql-15 kcat python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard python3-pip chromium
# Python modules Debian does not package: independent readers of the S3
# sink's Parquet and Avro files (connectors/s3/format).
TEST_PIPS := pyarrow fastavro cramjam
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build run test test-short bench deps s3-server vet fmt fuzz clean docker compose-up deploy-check

all: build

build:
	$(GO) build -o $(BIN) ./cmd/fjord

run: build
	./$(BIN) dev

# deps installs the Debian packages the tests use, only when one is missing.
deps:
	@missing=""; for p in $(TEST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing test dependencies:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@python3 -c "import pyarrow, fastavro, cramjam" 2>/dev/null || { \
		echo "installing test dependencies (pip): $(TEST_PIPS)"; \
		$(SUDO) python3 -m pip install -q --break-system-packages $(TEST_PIPS); }

vet:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# s3-server builds the MinIO server the S3 connector tests run against
# into .cache/bin (once; a few minutes the first time).
s3-server:
	scripts/s3-server.sh

test: deps s3-server build vet
	$(GO) test -race -timeout 20m $(PKGS)

# test-short is the inner loop: skips the slow process-level suites.
test-short:
	$(GO) test -short $(PKGS)

bench: build s3-server
	scripts/bench.sh --write $(BENCH_ARGS)
	$(BIN) bench connect --write $(BENCH_CONNECT_ARGS)
	$(BIN) bench cluster --write $(BENCH_CLUSTER_ARGS)
	$(BIN) bench postgres --write $(BENCH_POSTGRES_ARGS)
	$(BIN) bench s3 --write $(BENCH_S3_ARGS)
	$(BIN) bench mirror --write $(BENCH_MIRROR_ARGS)

# fuzz runs every fuzz target for a short while (FUZZTIME per target).
FUZZTIME ?= 30s
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

# docker builds the image (needs a container engine; not used by the tests,
# which check the deploy/ files statically: make deploy-check).
docker:
	docker build -t fjord:latest .

compose-up:
	docker compose -f deploy/compose/compose.yaml up -d --build

deploy-check:
	$(GO) test ./deploy/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
