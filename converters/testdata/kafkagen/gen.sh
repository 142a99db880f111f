#!/usr/bin/env bash
# gen.sh — regenerate the converters' golden files from Apache Kafka 4.4's
# own converters (jars fetched by scripts/kafka.sh, never committed).
# The JVM runs in UTC: Kafka's Values formats and parses dates in the
# JVM's default time zone, and Kafka Connect deployments run in UTC.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
"$ROOT/scripts/kafka.sh" fetch
CP="$("$ROOT/scripts/kafka.sh" classpath)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
javac -d "$OUT" -cp "$CP" "$HERE"/*.java
rm -rf "$ROOT/converters/json/testdata/golden/encode"
java -Xss64m -Duser.timezone=UTC -Dfile.encoding=UTF-8 -cp "$CP:$OUT" Gen "$ROOT/converters" 2> >(grep -v SLF4J >&2)
echo "golden files written under $ROOT/converters/*/testdata/golden" >&2
