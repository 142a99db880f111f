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
javac -nowarn -d "$OUT" -cp "$CP" "$HERE/Generator.java" "$HERE/ChainProbe.java"
java -Duser.timezone=UTC -cp "$OUT:$CP" Generator > "$HERE/kafka.jsonl"
echo "wrote $(wc -l < "$HERE/kafka.jsonl") cases to $HERE/kafka.jsonl" >&2
java -Duser.timezone=UTC -cp "$OUT:$CP" ChainProbe 2>/dev/null > "$HERE/chain.jsonl"
echo "wrote $(wc -l < "$HERE/chain.jsonl") chain validations to $HERE/chain.jsonl" >&2

# Debezium 3.6.1's ExtractNewRecordState, from Maven Central (Kafka's own
# jars come first on the classpath).
DBZ="${DEBEZIUM_CACHE:-$ROOT/.cache/debezium-3.6}"
if [ ! -f "$DBZ/libs/debezium-connect-plugins-3.6.1.Final.jar" ]; then
	mkdir -p "$DBZ"
	cat > "$DBZ/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.fjord</groupId><artifactId>debezium-ref</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.debezium</groupId><artifactId>debezium-connector-postgres</artifactId><version>3.6.1.Final</version>
      <exclusions><exclusion><groupId>org.apache.kafka</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
  </dependencies>
</project>
POM
	(cd "$DBZ" && mvn -q dependency:copy-dependencies -DoutputDirectory=libs >&2)
fi
java -Duser.timezone=UTC -cp "$OUT:$CP:$DBZ/libs/*" Generator debezium > "$HERE/debezium.jsonl"
echo "wrote $(wc -l < "$HERE/debezium.jsonl") cases to $HERE/debezium.jsonl" >&2
