#!/usr/bin/env bash
# capture.sh — record Kafka Connect 4.4's REST answers as golden files.
#
# Starts an Apache Kafka 4.4 broker (scripts/kafka.sh) and one Kafka Connect
# 4.4 worker in distributed mode (org.apache.kafka.connect.cli.ConnectDistributed,
# the same jars) with the FileStreamSource/Sink connectors, then runs
# capture.go, which sends every request of its script and writes the
# request/response pairs to exchanges.json beside this file. Everything runs on
# loopback and is stopped at the end. Regenerate by hand:
#
#   api/connect/testdata/kafka-connect-4.4/capture.sh [KAFKA_PORT]
#
# The file connectors live in their own artifact (connect-file); the package
# registry this project uses serves it up to 4.3.1, whose classes are the same
# FileStreamSource/Sink and run unchanged on the 4.4 runtime (only the plugin
# version they report differs); shim/ bridges the one class 4.4 moved.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../.." && pwd)"
PORT="${1:-19892}"
REST_PORT=$((PORT + 2))
FILE_VERSION="${CONNECT_FILE_VERSION:-4.3.1}"
WORK="$(mktemp -d /tmp/fjord-connect-capture.XXXXXX)"
CACHE="$ROOT/.cache/connect-file-$FILE_VERSION"

"$ROOT/scripts/kafka.sh" fetch
if [ ! -f "$CACHE/connect-file-$FILE_VERSION.jar" ]; then
	mkdir -p "$CACHE"
	mvn -q dependency:copy -Dartifact="org.apache.kafka:connect-file:$FILE_VERSION" -DoutputDirectory="$CACHE" >&2
	# slf4j 2 so the runtime's logs reach log4j2 (the broker's jar set brings 1.7).
	mvn -q dependency:copy -Dartifact="org.slf4j:slf4j-api:2.0.16" -DoutputDirectory="$CACHE/slf4j" >&2
fi
mkdir -p "$CACHE/shim"
javac -d "$CACHE/shim" -cp "$("$ROOT/scripts/kafka.sh" classpath)" "$HERE/shim/org/apache/kafka/common/utils/AppInfoParser.java"

cleanup() {
	for f in "$WORK/connect.pid" "$WORK/kafka/kafka.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	sleep 2
	for f in "$WORK/connect.pid" "$WORK/kafka/kafka.pid"; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true
	done
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

KAFKA_HEAP_OPTS="-Xmx512m -Xms512m" "$ROOT/scripts/kafka.sh" start "$PORT" "$WORK/kafka" >/dev/null

cat > "$WORK/worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:$PORT
group.id=fjord-capture
config.storage.topic=connect-configs
offset.storage.topic=connect-offsets
status.storage.topic=connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=5
status.storage.partitions=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$REST_PORT
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$REST_PORT
plugin.discovery=only_scan
PROPS
cat > "$WORK/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: INFO, AppenderRef: [ { ref: STDOUT } ] }
    Logger: [ { name: org.apache.kafka.clients, level: WARN }, { name: org.reflections, level: ERROR } ]
LOG
# The file connectors load from plugin.path, as in a Kafka installation.
mkdir -p "$WORK/plugins/connect-file"
cp "$CACHE/connect-file-$FILE_VERSION.jar" "$WORK/plugins/connect-file/"
echo "plugin.path=$WORK/plugins" >> "$WORK/worker.properties"
CP="$CACHE/slf4j/*:$("$ROOT/scripts/kafka.sh" classpath):$CACHE/shim"
nohup java -Xmx512m -Dlog4j2.configurationFile="$WORK/log4j2.yaml" -cp "$CP" \
	org.apache.kafka.connect.cli.ConnectDistributed "$WORK/worker.properties" >"$WORK/connect.log" 2>&1 &
echo $! > "$WORK/connect.pid"
echo "kafka on 127.0.0.1:$PORT, connect on http://127.0.0.1:$REST_PORT, work dir $WORK" >&2

if [ -n "${HOLD:-}" ]; then
	# Exploration: keep both running until $WORK/stop exists (bounded to an hour).
	for _ in $(seq 1 3600); do [ -f "$WORK/stop" ] && exit 0; sleep 1; done
	exit 0
fi
cd "$ROOT"
go run "$HERE/capture.go" -url "http://127.0.0.1:$REST_PORT" -dir "$WORK/files" -out "$HERE/exchanges.json" ${CAPTURE_ARGS:-}
