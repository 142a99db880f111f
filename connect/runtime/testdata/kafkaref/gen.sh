#!/usr/bin/env bash
# gen.sh — capture what Kafka Connect 4.4 answers, for connect/runtime's
# golden tests. Not part of `make test`: run it by hand from anywhere when
# the reference changes, then review the diff.
#
#   connect/runtime/testdata/kafkaref/gen.sh [PORT]
#
# It (1) dumps Kafka Connect's worker, connector and client config
# definitions (connect/runtime/kafkadefs.json, embedded by the package),
# (2) starts Apache Kafka 4.4 (scripts/kafka.sh) on 127.0.0.1:PORT and
# Kafka Connect distributed (ConnectDistributed) with REST on PORT+2 and
# the golden plugins of golden/*.java on its plugin path, and (3) runs
# capture.py: validate answers (validate/*.json), REST answers of a
# connector's life (rest.json), a dead letter queue record (dlq.json) and
# the records Connect wrote to its config, status and offset topics
# (connect/storage/testdata/internal_topics.json).
# Nothing but the outputs is kept; the jars stay in .cache/.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../.." && pwd)"
PORT="${1:-19592}"
REST=$((PORT + 2))
"$ROOT/scripts/kafka.sh" fetch
CP="$("$ROOT/scripts/kafka.sh" classpath)"
WORK="$(mktemp -d)"
cleanup() {
	for f in "$WORK/connect.pid" "$WORK/kafka/kafka.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	sleep 2
	rm -rf "$WORK"
}
trap cleanup EXIT

java -cp "$CP" "$HERE/DumpConnectConfigDef.java" 2>/dev/null > "$HERE/../../kafkadefs.json"

mkdir -p "$WORK/classes" "$WORK/plugins/golden"
javac -d "$WORK/classes" -cp "$CP" "$HERE"/golden/*.java
jar cf "$WORK/plugins/golden/golden.jar" -C "$WORK/classes" .

"$ROOT/scripts/kafka.sh" start "$PORT" "$WORK/kafka" >/dev/null

cat > "$WORK/worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:$PORT
group.id=golden
config.storage.topic=connect-configs
offset.storage.topic=connect-offsets
status.storage.topic=connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=500
listeners=http://127.0.0.1:$REST
rest.advertised.host.name=127.0.0.1
plugin.path=$WORK/plugins
PROPS
cat > "$WORK/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: WARN, AppenderRef: [ { ref: STDOUT } ] }
LOG
nohup java -Xmx512m -Dlog4j2.configurationFile="$WORK/log4j2.yaml" -cp "$CP" \
	org.apache.kafka.connect.cli.ConnectDistributed "$WORK/worker.properties" >"$WORK/connect.log" 2>&1 &
echo $! > "$WORK/connect.pid"

/usr/bin/python3 "$HERE/capture.py" "127.0.0.1:$PORT" "http://127.0.0.1:$REST" "$HERE" || {
	tail -50 "$WORK/connect.log" >&2
	exit 1
}
# The internal topics' records are connect/storage's golden file.
mv "$HERE/internal_topics.json" "$HERE/../../../storage/testdata/internal_topics.json"
