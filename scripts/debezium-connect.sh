#!/usr/bin/env bash
# debezium-connect.sh — fetch what `fjord bench postgres` runs beside Fjord:
# Kafka Connect 4.4 (Apache Kafka's own jars, via scripts/kafka.sh; the
# Connect runtime is among them) and Debezium 3.6.1's PostgreSQL connector
# (Maven Central, Kafka's jars excluded). Nothing here is committed: jars
# land in .cache/kafka-4.4/libs and .cache/debezium-3.6/libs (the same
# cache transforms/testdata/golden/generate.sh fills).
#
#   scripts/debezium-connect.sh fetch          download both (idempotent)
#   scripts/debezium-connect.sh classpath      Kafka's classpath (broker, Connect)
#   scripts/debezium-connect.sh plugin-dir     the directory holding Debezium's jars:
#                                              one plugin, for Connect's plugin.path
#
# The benchmark starts java itself (org.apache.kafka.connect.cli.ConnectDistributed
# with plugin.path holding a link to plugin-dir), so that it knows the JVM's pid.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DBZ="${DEBEZIUM_CACHE:-$ROOT/.cache/debezium-3.6}"
VERSION=3.6.1.Final

fetch() {
	"$ROOT/scripts/kafka.sh" fetch
	if [ -f "$DBZ/libs/debezium-connector-postgres-$VERSION.jar" ]; then return; fi
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
}

case "${1:-}" in
fetch) fetch ;;
classpath) "$ROOT/scripts/kafka.sh" classpath ;;
plugin-dir) echo "$DBZ/libs" ;;
*) echo "usage: $0 fetch | classpath | plugin-dir" >&2; exit 2 ;;
esac
