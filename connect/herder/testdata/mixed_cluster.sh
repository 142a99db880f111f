#!/usr/bin/env bash
# mixed_cluster.sh — one worker group made of a Kafka Connect 4.4 worker
# (org.apache.kafka.connect.cli.ConnectDistributed) and a Fjord worker
# (fjord connect), on a Fjord broker. It shows that Fjord speaks Kafka
# Connect's group protocol (metadata, assignments, incremental cooperative
# rebalancing), config/status topics, REST forwarding and KIP-507 signed
# task-config hand-overs, with either worker leading:
#
#   1. Kafka's worker starts first and leads; the Fjord worker joins.
#      Connectors created through the Fjord worker (forwarded to the
#      leader) run on both; a connector the Fjord worker runs hands its
#      task configs to Kafka's leader, which checks the signature.
#   2. Kafka's worker stops; Fjord leads. Kafka's worker comes back as a
#      follower, decodes Fjord's assignments, and hands the Fjord leader
#      task configs signed by Kafka's code.
#
# Every connector must end RUNNING with its task, and the file sinks must
# hold every line. Needs Java 17 and Maven (jars land in .cache/, never
# committed). Run by hand:
#
#   connect/herder/testdata/mixed_cluster.sh [BASE_PORT]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PORT="${1:-19792}"
KC_REST=$((PORT + 2))
FJ_REST=$((PORT + 3))
FILE_VERSION=4.3.1 # the connect-file artifact the registry serves; same classes as 4.4
CACHE="$ROOT/.cache/connect-file-$FILE_VERSION"
WORK="$(mktemp -d /tmp/fjord-mixed.XXXXXX)"

"$ROOT/scripts/kafka.sh" fetch
if [ ! -f "$CACHE/connect-file-$FILE_VERSION.jar" ]; then
	mkdir -p "$CACHE"
	mvn -q dependency:copy -Dartifact="org.apache.kafka:connect-file:$FILE_VERSION" -DoutputDirectory="$CACHE" >&2
	mvn -q dependency:copy -Dartifact="org.slf4j:slf4j-api:2.0.16" -DoutputDirectory="$CACHE/slf4j" >&2
fi
SHIM="$ROOT/api/connect/testdata/kafka-connect-4.4/shim"
mkdir -p "$CACHE/shim"
javac -d "$CACHE/shim" -cp "$("$ROOT/scripts/kafka.sh" classpath)" "$SHIM/org/apache/kafka/common/utils/AppInfoParser.java"
(cd "$ROOT" && go build -o "$WORK/fjord" ./cmd/fjord)

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		for _ in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
		kill -9 "$p" 2>/dev/null || true
	done
	[ -n "${KEEP:-}" ] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; tail -n 30 "$WORK"/*.log >&2; exit 1; }

# until CMD... : retry for up to 60 s.
until_ok() {
	for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
	return 1
}

"$WORK/fjord" dev --data-dir "$WORK/data" --kafka-addr "127.0.0.1:$PORT" --http-addr "127.0.0.1:$((PORT + 1))" >"$WORK/broker.log" 2>&1 &
pids+=($!)
until_ok bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" || fail "broker did not start"

cat >"$WORK/common.properties" <<PROPS
bootstrap.servers=127.0.0.1:$PORT
group.id=mixed
config.storage.topic=mixed-configs
offset.storage.topic=mixed-offsets
status.storage.topic=mixed-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=5
status.storage.partitions=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=1000
scheduled.rebalance.max.delay.ms=5000
PROPS
mkdir -p "$WORK/plugins/connect-file"
cp "$CACHE/connect-file-$FILE_VERSION.jar" "$WORK/plugins/connect-file/"
{ cat "$WORK/common.properties"; printf 'listeners=http://127.0.0.1:%s\nrest.advertised.host.name=127.0.0.1\nrest.advertised.port=%s\nplugin.discovery=only_scan\nplugin.path=%s/plugins\n' "$KC_REST" "$KC_REST" "$WORK"; } >"$WORK/kafka.properties"
{ cat "$WORK/common.properties"; printf 'listeners=http://127.0.0.1:%s\n' "$FJ_REST"; } >"$WORK/fjord.properties"
cat >"$WORK/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: INFO, AppenderRef: [ { ref: STDOUT } ] }
    Logger: [ { name: org.apache.kafka.clients, level: WARN }, { name: org.reflections, level: ERROR } ]
LOG
CP="$CACHE/slf4j/*:$("$ROOT/scripts/kafka.sh" classpath):$CACHE/shim"
start_kafka_worker() {
	java -Xmx512m -Dlog4j2.configurationFile="$WORK/log4j2.yaml" -cp "$CP" \
		org.apache.kafka.connect.cli.ConnectDistributed "$WORK/kafka.properties" >>"$WORK/kafka-connect.log" 2>&1 &
	KC_PID=$!
	pids+=("$KC_PID")
	until_ok curl -sf "http://127.0.0.1:$KC_REST/" || fail "Kafka Connect worker did not start"
}

create() { # worker-port name json-config
	until_ok curl -sf -XPOST -H 'Content-Type: application/json' "http://127.0.0.1:$1/connectors" \
		-d "{\"name\":\"$2\",\"config\":$3}" || fail "create $2 through :$1"
}

running() { # name: connector and its one task RUNNING (asked of the Kafka worker)
	curl -sf "http://127.0.0.1:$KC_REST/connectors/$1/status" |
		grep -q "\"connector\":{\"state\":\"RUNNING\".*\"tasks\":\[{\"id\":0,\"state\":\"RUNNING\""
}

lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

leader_url() { grep "joined the worker group" "$WORK/fjord.log" | tail -n 1 | grep -o 'leader_url=[^ ]*' | cut -d= -f2; }

echo "== 1. Kafka Connect leads, Fjord follows" >&2
start_kafka_worker
"$WORK/fjord" connect "$WORK/fjord.properties" >"$WORK/fjord.log" 2>&1 &
pids+=($!)
until_ok curl -sf "http://127.0.0.1:$FJ_REST/" || fail "Fjord worker did not start"
seq 1 500 >"$WORK/in.txt"
create "$FJ_REST" src "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSourceConnector\",\"file\":\"$WORK/in.txt\",\"topic\":\"mixed-data\"}"
create "$FJ_REST" sink "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSinkConnector\",\"file\":\"$WORK/out.txt\",\"topics\":\"mixed-data\"}"
create "$KC_REST" sink2 "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSinkConnector\",\"file\":\"$WORK/out2.txt\",\"topics\":\"mixed-data\"}"
for c in src sink sink2; do until_ok running "$c" || fail "$c not running"; done
until_ok lines "$WORK/out.txt" 500 || fail "sink wrote $(wc -l <"$WORK/out.txt") of 500 lines"
until_ok lines "$WORK/out2.txt" 500 || fail "sink2 wrote too few lines"
[ "$(leader_url)" = "http://127.0.0.1:$KC_REST/" ] || fail "expected Kafka's worker to lead, Fjord saw $(leader_url)"
grep -q "worker_id\":\"127.0.0.1:$FJ_REST" <(for c in src sink sink2; do curl -s "http://127.0.0.1:$KC_REST/connectors/$c/status"; done) ||
	fail "nothing runs on the Fjord worker"
! grep -q "failed to hand task configs" "$WORK/fjord.log" || fail "Kafka's leader refused a hand-over"

echo "== 2. Fjord leads, Kafka Connect follows" >&2
kill "$KC_PID"
until_ok bash -c "[ \"\$(grep 'joined the worker group' '$WORK/fjord.log' | tail -n 1 | grep -o 'leader_url=[^ ]*')\" = 'leader_url=http://127.0.0.1:$FJ_REST/' ]" ||
	fail "the Fjord worker did not take the lead"
start_kafka_worker
seq 1 300 >"$WORK/in2.txt"
create "$KC_REST" src2 "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSourceConnector\",\"file\":\"$WORK/in2.txt\",\"topic\":\"mixed-data2\"}"
create "$KC_REST" sink3 "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSinkConnector\",\"file\":\"$WORK/out3.txt\",\"topics\":\"mixed-data2\"}"
for c in src sink sink2 src2 sink3; do until_ok running "$c" || fail "$c not running"; done
until_ok lines "$WORK/out3.txt" 300 || fail "sink3 wrote too few lines"
grep -q "leaderUrl='http://127.0.0.1:$FJ_REST/'" "$WORK/kafka-connect.log" || fail "Kafka's worker never took an assignment from the Fjord leader"
grep -q "worker_id\":\"127.0.0.1:$KC_REST" <(for c in src sink sink2 src2 sink3; do curl -s "http://127.0.0.1:$KC_REST/connectors/$c/status"; done) ||
	fail "nothing runs on the Kafka worker under the Fjord leader"
echo "OK: a Kafka Connect 4.4 worker and a Fjord worker share one group, either leading" >&2
