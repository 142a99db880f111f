#!/usr/bin/env bash
# capture.sh — what Kafka Connect 4.4 does with the file connectors, as
# golden files for Fjord's end-to-end tests (connectors/file/e2e_test.go).
#
# Starts an Apache Kafka 4.4 broker (scripts/kafka.sh) and runs
# org.apache.kafka.connect.cli.ConnectStandalone from the same jars with
# connect-file (4.3.1, the newest the package registry serves; its classes
# are unchanged in 4.4, shim/ bridges the one utility class 4.4 moved):
#
#   1. FileStreamSource input.txt -> topic -> FileStreamSink, once with
#      StringConverter and once with JsonConverter (schemas.enable=true):
#      topic-<conv>.jsonl holds the topic's records (base64 key and value),
#      out-<conv>.txt the sink's file.
#   2. FileStreamSink from topics filled with the JSON cases of
#      ../javagen/cases.txt (JsonConverter with and without schemas):
#      sink-schemaless.txt, sink-schema.txt.
#
# Everything runs on loopback and is stopped at the end. Regenerate by hand:
#   connectors/file/testdata/kafka-connect/capture.sh [KAFKA_PORT]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../.." && pwd)"
PORT="${1:-19960}"
REST_PORT=$((PORT + 2))
FILE_VERSION=4.3.1
CACHE="$ROOT/.cache/connect-file-$FILE_VERSION"
WORK="$(mktemp -d /tmp/fjord-file-capture.XXXXXX)"
PY=/usr/bin/python3

"$ROOT/scripts/kafka.sh" fetch
if [ ! -f "$CACHE/connect-file-$FILE_VERSION.jar" ]; then
	mkdir -p "$CACHE"
	mvn -q dependency:copy -Dartifact="org.apache.kafka:connect-file:$FILE_VERSION" -DoutputDirectory="$CACHE" >&2
	mvn -q dependency:copy -Dartifact="org.slf4j:slf4j-api:2.0.16" -DoutputDirectory="$CACHE/slf4j" >&2
fi
KCP="$("$ROOT/scripts/kafka.sh" classpath)"
mkdir -p "$WORK/shim"
javac -d "$WORK/shim" -cp "$KCP" "$HERE/shim/AppInfoParser.java"
mkdir -p "$WORK/plugins/connect-file"
cp "$CACHE/connect-file-$FILE_VERSION.jar" "$WORK/plugins/connect-file/"
CP="$CACHE/slf4j/*:$KCP:$WORK/shim"

CONNECT_PID=""
cleanup() {
	[ -n "$CONNECT_PID" ] && kill "$CONNECT_PID" 2>/dev/null || true
	[ -f "$WORK/kafka/kafka.pid" ] && kill "$(cat "$WORK/kafka/kafka.pid")" 2>/dev/null || true
	sleep 2
	[ -n "$CONNECT_PID" ] && kill -9 "$CONNECT_PID" 2>/dev/null || true
	[ -f "$WORK/kafka/kafka.pid" ] && kill -9 "$(cat "$WORK/kafka/kafka.pid")" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

KAFKA_HEAP_OPTS="-Xmx512m -Xms512m" "$ROOT/scripts/kafka.sh" start "$PORT" "$WORK/kafka" >/dev/null
cat > "$WORK/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: INFO, AppenderRef: [ { ref: STDOUT } ] }
    Logger: [ { name: org.apache.kafka.clients, level: WARN }, { name: org.reflections, level: ERROR } ]
LOG

# run_standalone NAME CONVERTER_CLASS CONNECTOR_PROPS... : runs ConnectStandalone
# until wait_lines is satisfied, then stops it.
run_standalone() {
	local name="$1" conv="$2"; shift 2
	cat > "$WORK/$name-worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:$PORT
key.converter=$conv
value.converter=$conv
offset.storage.file.filename=$WORK/$name.offsets
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$REST_PORT
plugin.path=$WORK/plugins
plugin.discovery=only_scan
PROPS
	java -Xmx512m -Duser.timezone=UTC -Dlog4j2.configurationFile="$WORK/log4j2.yaml" -cp "$CP" \
		org.apache.kafka.connect.cli.ConnectStandalone "$WORK/$name-worker.properties" "$@" >"$WORK/$name.log" 2>&1 &
	CONNECT_PID=$!
}

stop_standalone() {
	kill "$CONNECT_PID"
	for _ in $(seq 1 60); do kill -0 "$CONNECT_PID" 2>/dev/null || break; sleep 0.5; done
	kill -9 "$CONNECT_PID" 2>/dev/null || true
	CONNECT_PID=""
}

# wait_lines FILE N: until FILE has N lines (bounded).
wait_lines() {
	for _ in $(seq 1 240); do
		if [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]; then return 0; fi
		sleep 0.5
	done
	echo "timed out waiting for $2 lines in $1" >&2
	return 1
}

dump_topic() {
	"$PY" - "127.0.0.1:$PORT" "$1" "$2" <<'PYEOF'
import base64, json, sys
from kafka import KafkaConsumer, TopicPartition
bootstrap, topic, out = sys.argv[1:4]
c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
tp = TopicPartition(topic, 0)
c.assign([tp]); c.seek_to_beginning(tp)
end = c.end_offsets([tp])[tp]
with open(out, "w") as f:
    for m in c:
        b64 = lambda b: None if b is None else base64.b64encode(b).decode()
        f.write(json.dumps({"key": b64(m.key), "value": b64(m.value), "headers": len(m.headers)}) + "\n")
        if m.offset + 1 >= end:
            break
PYEOF
}

EXPECTED=8 # complete lines in input.txt
cp "$HERE/input.txt" "$WORK/input.txt"
for conv in string json; do
	class=org.apache.kafka.connect.storage.StringConverter
	[ "$conv" = json ] && class=org.apache.kafka.connect.json.JsonConverter
	cat > "$WORK/source-$conv.properties" <<PROPS
name=source-$conv
connector.class=FileStreamSource
tasks.max=1
file=$WORK/input.txt
topic=lines-$conv
PROPS
	cat > "$WORK/sink-$conv.properties" <<PROPS
name=sink-$conv
connector.class=FileStreamSink
tasks.max=1
file=$WORK/out-$conv.txt
topics=lines-$conv
PROPS
	run_standalone "$conv" "$class" "$WORK/source-$conv.properties" "$WORK/sink-$conv.properties"
	wait_lines "$WORK/out-$conv.txt" "$EXPECTED"
	sleep 2 # the sink must not write more than it should
	stop_standalone
	dump_topic "lines-$conv" "$HERE/topic-$conv.jsonl"
	cp "$WORK/out-$conv.txt" "$HERE/out-$conv.txt"
done

# Sink formatting: the JSON cases, produced as they are, read by JsonConverter.
"$PY" - "127.0.0.1:$PORT" "$HERE/../javagen/cases.txt" <<'PYEOF'
import sys
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    mode, payload = line.split("\t", 1)
    if mode in ("schemaless", "schema"):
        p.send("values-" + mode, payload.encode(), partition=0)
p.flush()
PYEOF
for mode in schemaless schema; do
	enable=false
	[ "$mode" = schema ] && enable=true
	cat > "$WORK/sink-values-$mode.properties" <<PROPS
name=sink-values-$mode
connector.class=FileStreamSink
tasks.max=1
file=$WORK/sink-$mode.txt
topics=values-$mode
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=$enable
PROPS
done
N_SCHEMALESS=$(grep -c '^schemaless' "$HERE/../javagen/cases.txt")
N_SCHEMA=$(grep -c '^schema	' "$HERE/../javagen/cases.txt")
run_standalone values org.apache.kafka.connect.json.JsonConverter "$WORK/sink-values-schemaless.properties" "$WORK/sink-values-schema.properties"
wait_lines "$WORK/sink-schemaless.txt" "$N_SCHEMALESS"
wait_lines "$WORK/sink-schema.txt" "$N_SCHEMA"
stop_standalone
# Dates print in the JVM's zone, pinned to UTC above.
cp "$WORK/sink-schemaless.txt" "$WORK/sink-schema.txt" "$HERE/"
echo "captured into $HERE" >&2
