#!/usr/bin/env bash
# gen.sh regenerates protocol.json: Kafka Connect 4.4's own encodings of
# worker metadata and assignments (see java/ProtocolGolden.java). Needs
# Java 17 and the jars fetched by scripts/kafka.sh (never committed).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../.." && pwd)"
"$ROOT/scripts/kafka.sh" fetch
java -cp "$("$ROOT/scripts/kafka.sh" classpath)" "$HERE/java/ProtocolGolden.java" > "$HERE/protocol.json.tmp"
mv "$HERE/protocol.json.tmp" "$HERE/protocol.json"
echo "wrote $HERE/protocol.json" >&2
