#!/usr/bin/env bash
# debezium-connect.sh — fetch what `fjord bench postgres` runs beside Fjord:
# Kafka Connect 4.4 (Apache Kafka's own jars, via scripts/kafka.sh; the
# Connect runtime is among them) and Debezium 3.6.1's PostgreSQL connector
# (Maven Central, Kafka's jars excluded). Nothing here is committed: jars
# land in .cache/kafka-4.4/libs and .cache/debezium-3.6/libs (the same
# cache transforms/testdata/golden/generate.sh fills).
#
#   scripts/debezium-connect.sh fetch          download both, build the bridge (idempotent)
#   scripts/debezium-connect.sh classpath      the worker's classpath: Kafka's jars and the bridge
#   scripts/debezium-connect.sh plugin-dir     the directory holding Debezium's jars:
#                                              one plugin, for Connect's plugin.path
#
# The bridge: Debezium 3.6.1 is built against Kafka 4.3, and its metrics call
# org.apache.kafka.common.utils.Sanitizer, which Kafka 4.4 moved to
# ...common.utils.internals (every other Kafka class Debezium's jars name is
# where 4.4 has it). One class of that name, forwarding to the moved one, sits
# on the worker's classpath; Connect's plugin class loader takes
# org.apache.kafka classes from there. Without it every Debezium task fails at
# start with NoClassDefFoundError.
#
# The benchmark starts java itself (org.apache.kafka.connect.cli.ConnectDistributed
# with plugin.path holding a link to plugin-dir), so that it knows the JVM's pid.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DBZ="${DEBEZIUM_CACHE:-$ROOT/.cache/debezium-3.6}"
VERSION=3.6.1.Final

bridge() {
	if [ -f "$DBZ/bridge/org/apache/kafka/common/utils/Sanitizer.class" ]; then return; fi
	local src; src="$(mktemp -d)"
	mkdir -p "$src/org/apache/kafka/common/utils"
	cat > "$src/org/apache/kafka/common/utils/Sanitizer.java" <<'JAVA'
package org.apache.kafka.common.utils;

/** Kafka 4.3's Sanitizer for Debezium 3.6.1, forwarding to where Kafka 4.4 moved it. */
public final class Sanitizer {
    private Sanitizer() { }
    public static String sanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.sanitize(name); }
    public static String desanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.desanitize(name); }
    public static String jmxSanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.jmxSanitize(name); }
}
JAVA
	mkdir -p "$DBZ/bridge"
	javac -nowarn -d "$DBZ/bridge" -cp "$("$ROOT/scripts/kafka.sh" classpath)" "$src/org/apache/kafka/common/utils/Sanitizer.java"
	rm -rf "$src"
}

fetch() {
	"$ROOT/scripts/kafka.sh" fetch
	if [ -f "$DBZ/libs/debezium-connector-postgres-$VERSION.jar" ]; then bridge; return; fi
	mkdir -p "$DBZ"
	cat > "$DBZ/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.fjord</groupId><artifactId>debezium-ref</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.debezium</groupId><artifactId>debezium-connector-postgres</artifactId><version>$VERSION</version>
      <exclusions><exclusion><groupId>org.apache.kafka</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
  </dependencies>
</project>
POM
	echo "fetching Debezium $VERSION (PostgreSQL connector) from Maven Central into $DBZ/libs ..." >&2
	(cd "$DBZ" && mvn -q dependency:copy-dependencies -DoutputDirectory=libs >&2)
	bridge
}

case "${1:-}" in
fetch) fetch ;;
classpath) echo "$("$ROOT/scripts/kafka.sh" classpath):$DBZ/bridge" ;;
plugin-dir) echo "$DBZ/libs" ;;
*) echo "usage: $0 fetch | classpath | plugin-dir" >&2; exit 2 ;;
esac
