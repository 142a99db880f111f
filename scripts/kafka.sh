#!/usr/bin/env bash
# kafka.sh — fetch and run Apache Kafka 4.4 (KRaft, one combined node) as the
# reference peer for golden files and benchmarks. Nothing here is committed:
# jars land in .cache/kafka-4.4/libs (Maven Central via mvn), data in a temp dir.
#
#   scripts/kafka.sh fetch                      download the jars (idempotent)
#   scripts/kafka.sh start PORT DIR [k=v ...]   format DIR and start a broker on
#                                               127.0.0.1:PORT (controller on PORT+1),
#                                               extra server properties appended;
#                                               prints the PID, waits until it serves
#   scripts/kafka.sh classpath                  print the classpath
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${KAFKA_CACHE:-$ROOT/.cache/kafka-4.4}"
VERSION=4.4.0

fetch() {
	if [ -f "$CACHE/libs/kafka_2.13-$VERSION.jar" ]; then return; fi
	mkdir -p "$CACHE"
	cat > "$CACHE/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.fjord</groupId><artifactId>kafka-ref</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.24.3</version></dependency>
  </dependencies>
</project>
POM
	echo "fetching Apache Kafka $VERSION jars from Maven Central into $CACHE/libs ..." >&2
	(cd "$CACHE" && mvn -q dependency:copy-dependencies -DoutputDirectory=libs >&2)
}

classpath() { echo "$CACHE/libs/*"; }

start() {
	local port="$1" dir="$2"; shift 2
	fetch
	mkdir -p "$dir"
	local cport=$((port + 1))
	cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
	for kv in "$@"; do echo "$kv" >> "$dir/server.properties"; done
	cat > "$dir/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: WARN, AppenderRef: [ { ref: STDOUT } ] }
    Logger: [ { name: kafka.server.KafkaServer, level: INFO }, { name: kafka.server.BrokerServer, level: INFO } ]
LOG
	local cp; cp="$(classpath)"
	java -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null)" \
		-c "$dir/server.properties" >"$dir/format.log" 2>&1
	KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
	# shellcheck disable=SC2086
	nohup java $KAFKA_HEAP_OPTS -XX:+UseG1GC -Dlog4j2.configurationFile="$dir/log4j2.yaml" \
		-cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 &
	local pid=$!
	echo "$pid" > "$dir/kafka.pid"
	for _ in $(seq 1 120); do
		if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then echo "$pid"; return 0; fi
		kill -0 "$pid" 2>/dev/null || { echo "kafka exited; see $dir/kafka.log" >&2; return 1; }
		sleep 0.5
	done
	echo "kafka did not listen on $port within 60s; see $dir/kafka.log" >&2
	return 1
}

case "${1:-}" in
fetch) fetch ;;
classpath) classpath ;;
start) shift; start "$@" ;;
*) echo "usage: $0 fetch | classpath | start PORT DIR [key=value ...]" >&2; exit 2 ;;
esac
