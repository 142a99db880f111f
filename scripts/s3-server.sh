#!/usr/bin/env bash
# s3-server.sh — build the MinIO server the S3 connector tests run against
# (internal/testkit.StartS3) into .cache/bin/minio, from source, at a pinned
# version. Idempotent: a binary already built from that version is kept, so
# `make test` can call this every time. Nothing here is committed.
#
# The first build compiles all of MinIO: measured at 3 minutes on a 2-core
# machine with an empty build cache (4.5 CPU-minutes), plus the module
# download when the Go module cache is cold.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/.cache/bin"
MODULE=github.com/minio/minio
VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

# built_version prints the module version an existing binary was built from
# (go version -m reads the build info Go embeds in every binary).
built_version() {
	go version -m "$BIN/minio" 2>/dev/null | awk -v m="$MODULE" '$1 == "mod" && $2 == m { print $3 }'
}

if [ -x "$BIN/minio" ] && [ "$(built_version)" = "$VERSION" ]; then
	exit 0
fi

mkdir -p "$BIN"
echo "building MinIO $VERSION from source into $BIN/minio" >&2
echo "(about 3 minutes on 2 cores with an empty Go build cache; more to download modules)" >&2
start=$(date +%s)
# go install pkg@version builds outside this module: MinIO's own go.mod
# decides its dependencies, so Fjord's go.mod is not touched.
GOBIN="$BIN" GOFLAGS= go install "$MODULE@$VERSION"
echo "MinIO built in $(($(date +%s) - start))s: $BIN/minio" >&2
