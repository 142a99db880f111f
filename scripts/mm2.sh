#!/usr/bin/env bash
# mm2.sh — fetch and run Apache Kafka's MirrorMaker 2 in dedicated mode
# (org.apache.kafka.connect.mirror.MirrorMaker, what connect-mirror-maker.sh
# starts), the reference `fjord bench mirror` measures `fjord mirror` against.
# Nothing here is committed: jars land in .cache/mm2/<version>/libs (Maven
# Central via mvn), beside a log4j2 config.
#
#   scripts/mm2.sh fetch                  download the jars (idempotent)
#   scripts/mm2.sh version                print the version fetched
#   scripts/mm2.sh classpath              print the classpath
#   scripts/mm2.sh run mm2.properties [--clusters A,B]
#                                         run MirrorMaker 2 in the foreground;
#                                         exec's java, so the script's pid is the JVM's
#
# Version: MM2_VERSION (default 4.4.0). Kafka 4.4.0's connect-mirror and
# connect-mirror-client were not on Maven Central when this was written
# (connect-runtime, connect-json and kafka-clients 4.4.0 were), so when they
# cannot be resolved fetch says so and takes MM2_FALLBACK_VERSION (default
# 4.3.1, the newest release whose connect-mirror is there) for every jar: one
# Kafka release as Apache ships it, not 4.3 mirror classes on a 4.4 runtime.
# A cached fallback is used until .cache/mm2 is removed.
#
# The JVM gets what connect-mirror-maker.sh and kafka-run-class.sh give it by
# default: -Xms256M -Xmx2G and KAFKA_JVM_PERFORMANCE_OPTS (MM2_HEAP_OPTS and
# MM2_JVM_OPTS override them). The log is kept to warnings plus MirrorMaker's
# own start-up lines (MM2_LOG4J names another log4j2 config).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${MM2_CACHE:-$ROOT/.cache/mm2}"
VERSION="${MM2_VERSION:-4.4.0}"
FALLBACK="${MM2_FALLBACK_VERSION:-4.3.1}"
LOG4J_VERSION=2.24.3
# Kafka's distribution ships slf4j 2 beside log4j-slf4j2-impl; the Maven
# poms name slf4j 1.7, which would not find the binding and drop every log line.
SLF4J_VERSION=2.0.17

# fetched prints the version whose jars are complete in the cache, if any.
fetched() {
	local v
	for v in "$VERSION" "$FALLBACK"; do
		if [ -f "$CACHE/$v/libs/connect-mirror-$v.jar" ] && [ -f "$CACHE/$v/log4j2.xml" ]; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

# fetchVersion resolves one Kafka version's MirrorMaker 2 jars into $CACHE/$1.
fetchVersion() {
	local v="$1" dir="$CACHE/$1"
	mkdir -p "$dir"
	cat > "$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.fjord</groupId><artifactId>mm2-ref</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>connect-mirror</artifactId><version>$v</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>connect-mirror-client</artifactId><version>$v</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId><version>$v</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>connect-json</artifactId><version>$v</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>$v</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>$SLF4J_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>$LOG4J_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>$LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
POM
	echo "fetching Apache Kafka $v MirrorMaker 2 jars from Maven Central into $dir/libs ..." >&2
	rm -rf "$dir/libs"
	if ! (cd "$dir" && mvn -q dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=libs >"$dir/mvn.log" 2>&1); then
		grep -m1 -o 'Could not [^[]*' "$dir/mvn.log" >&2 || tail -5 "$dir/mvn.log" >&2
		return 1
	fi
	# Warnings, and MirrorMaker's lines saying which flows started. XML:
	# log4j2 reads YAML only with jackson-dataformat-yaml, which these jars lack.
	cat > "$dir/log4j2.xml" <<'LOG'
<Configuration>
  <Appenders><Console name="STDOUT"><PatternLayout pattern="[%d] %p %m (%c)%n"/></Console></Appenders>
  <Loggers>
    <Root level="WARN"><AppenderRef ref="STDOUT"/></Root>
    <Logger name="org.apache.kafka.connect.mirror.MirrorMaker" level="INFO"/>
  </Loggers>
</Configuration>
LOG
}

fetch() {
	if fetched >/dev/null; then return; fi
	if fetchVersion "$VERSION"; then return; fi
	if [ "$FALLBACK" = "$VERSION" ]; then return 1; fi
	echo "mm2.sh: Kafka $VERSION's MirrorMaker 2 jars are not on Maven Central; using Kafka $FALLBACK's (all jars of that release)" >&2
	fetchVersion "$FALLBACK"
}

version() {
	fetched || { echo "mm2.sh: nothing fetched yet (run $0 fetch)" >&2; return 1; }
}

classpath() { echo "$CACHE/$(version)/libs/*"; }

run() {
	if [ $# -lt 1 ]; then echo "usage: $0 run mm2.properties [--clusters A,B]" >&2; exit 2; fi
	fetch
	local v; v="$(version)"
	local heap="${MM2_HEAP_OPTS:--Xms256M -Xmx2G}"
	local jvm="${MM2_JVM_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
	# shellcheck disable=SC2086
	exec java $heap $jvm -Dlog4j2.configurationFile="${MM2_LOG4J:-$CACHE/$v/log4j2.xml}" \
		-cp "$CACHE/$v/libs/*" org.apache.kafka.connect.mirror.MirrorMaker "$@"
}

case "${1:-}" in
fetch) fetch ;;
version) version ;;
classpath) classpath ;;
run) shift; run "$@" ;;
*) echo "usage: $0 fetch | version | classpath | run mm2.properties [--clusters A,B]" >&2; exit 2 ;;
esac
