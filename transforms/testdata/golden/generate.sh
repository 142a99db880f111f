#!/usr/bin/env bash
# generate.sh — regenerate kafka.jsonl, the golden outputs of Kafka
# Connect 4.4's transformations and predicates (see Generator.java), from
# the jars scripts/kafka.sh fetches. Run from anywhere:
#
#   transforms/testdata/golden/generate.sh
#
# The JVM runs in UTC: Kafka formats some dates in the JVM's zone.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
"$ROOT/scripts/kafka.sh" fetch
CP="$("$ROOT/scripts/kafka.sh" classpath)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
javac -nowarn -d "$OUT" -cp "$CP" "$HERE/Generator.java"
java -Duser.timezone=UTC -Dlog4j2.level=OFF -cp "$OUT:$CP" Generator > "$HERE/kafka.jsonl"
echo "wrote $(wc -l < "$HERE/kafka.jsonl") cases to $HERE/kafka.jsonl" >&2
