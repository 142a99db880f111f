#!/usr/bin/env bash
# gen.sh — regenerate ../golden.json from ../cases.json with Apache Avro's
# Java library (1.12.0, the version Confluent Platform 8 builds on):
# Schema.toString() of each schema (the text Confluent's registry stores)
# and SchemaCompatibility.checkReaderWriterCompatibility of each pair.
# Needs Java 17 and mvn; the jars go to .cache/avro-1.12 at the repo root.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../../.." && pwd)"
CACHE="$ROOT/.cache/avro-1.12"
if [ ! -f "$CACHE/libs/avro-1.12.0.jar" ]; then
	mkdir -p "$CACHE"
	cp "$HERE/pom.xml" "$CACHE/pom.xml"
	(cd "$CACHE" && mvn -q dependency:copy-dependencies -DoutputDirectory=libs >&2)
fi
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
javac -d "$OUT" -cp "$CACHE/libs/*" "$HERE/AvscGolden.java"
java -cp "$OUT:$CACHE/libs/*" AvscGolden "$HERE/../cases.json" > "$HERE/../golden.json"
echo "wrote $(cd "$HERE/.." && pwd)/golden.json" >&2
