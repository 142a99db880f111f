#!/usr/bin/env bash
# gen.sh — capture what Debezium 3.6.1's PostgresConnector emits on Kafka
# Connect 4.4, the golden files of connectors/postgres/cdc. Not part of
# `make test`: run it by hand from anywhere when the reference changes,
# then review the diff.
#
#   connectors/postgres/cdc/testdata/debezium/gen.sh [PORT]
#
# It starts PostgreSQL 15 (initdb in a temp dir, the settings of
# internal/testkit/postgres.go) on 127.0.0.1:PORT+3, Apache Kafka 4.4
# (scripts/kafka.sh, KRaft) on PORT and PORT+1, and Kafka Connect 4.4
# distributed with REST on PORT+2 and Debezium on its plugin path, then
# runs capture.py: for each run (RUNS in capture.py) a fresh database from
# fixture_snapshot.sql, a connector, the snapshot, fixture_stream.sql,
# and every record of the run's topics into <run>.jsonl. It also saves
# validate answers (validate_*.json). Jars are fetched with mvn into
# .cache/ on first use and never committed. Every process it starts is
# stopped on exit.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../../.." && pwd)"
PORT="${1:-19692}"
REST=$((PORT + 2))
PGPORT=$((PORT + 3))
PGBIN="${FJORD_PG_BIN:-/usr/lib/postgresql/15/bin}"
PY=/usr/bin/python3 # Debian's, which has python3-kafka

say() { echo "gen.sh: $*" >&2; }

for p in "$PORT" $((PORT + 1)) "$REST" "$PGPORT"; do
	if (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; then
		say "port $p is in use; pass another base PORT"
		exit 1
	fi
done
[ -x "$PGBIN/postgres" ] || { say "no PostgreSQL server in $PGBIN (install postgresql-15)"; exit 1; }
"$PY" -c 'import kafka' 2>/dev/null || { say "$PY lacks the kafka module (apt-get install python3-kafka)"; exit 1; }

# Jars: Kafka 4.4 from scripts/kafka.sh, Debezium 3.6.1 with the same pom
# and cache as transforms/testdata/golden/generate.sh (Kafka's own jars
# excluded: the worker provides them).
"$ROOT/scripts/kafka.sh" fetch
CP="$("$ROOT/scripts/kafka.sh" classpath)"
DBZ="${DEBEZIUM_CACHE:-$ROOT/.cache/debezium-3.6}"
if [ ! -f "$DBZ/libs/debezium-connector-postgres-3.6.1.Final.jar" ]; then
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
	say "fetching Debezium 3.6.1 jars from Maven Central into $DBZ/libs ..."
	(cd "$DBZ" && mvn -B -q dependency:copy-dependencies -DoutputDirectory=libs >&2)
fi

# scripts/kafka.sh's classpath resolves slf4j-api 1.7, which does not
# bind log4j-slf4j2-impl: Connect and Debezium would log nothing. An
# slf4j-api 2 ahead of it gives the Connect log Debezium's warnings.
if [ ! -f "$DBZ/worker-libs/slf4j-api-2.0.16.jar" ]; then
	mvn -B -q dependency:copy -Dartifact=org.slf4j:slf4j-api:2.0.16 -DoutputDirectory="$DBZ/worker-libs" >&2
fi

WORK="$(mktemp -d /tmp/fjord-dbz-gen.XXXXXX)"
PGDATA="$WORK/pg/data"
# Postgres refuses to run as root: run its programs as the postgres user.
if [ "$(id -u)" = 0 ]; then
	asPG() { runuser -u postgres -- "$@"; }
else
	asPG() { "$@"; }
fi
cleanup() {
	local rc=$?
	set +e
	if [ -f "$WORK/connect.pid" ]; then
		kill "$(cat "$WORK/connect.pid")" 2>/dev/null
	fi
	if [ -f "$WORK/kafka/kafka.pid" ]; then
		kill "$(cat "$WORK/kafka/kafka.pid")" 2>/dev/null
	fi
	if [ -f "$PGDATA/postmaster.pid" ]; then
		asPG "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -t 30 stop >/dev/null 2>&1
	fi
	# Bounded wait for the JVMs to go, then force.
	for f in "$WORK/connect.pid" "$WORK/kafka/kafka.pid"; do
		[ -f "$f" ] || continue
		local pid; pid="$(cat "$f")"
		for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
		kill -9 "$pid" 2>/dev/null
	done
	if [ $rc -ne 0 ] && [ -z "${KEEP:-}" ]; then
		say "failed; last lines of the Connect log:"
		tail -40 "$WORK/connect.log" >&2 2>/dev/null
	fi
	if [ -n "${KEEP:-}" ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "starting PostgreSQL on 127.0.0.1:$PGPORT"
mkdir -p "$WORK/pg"
echo fjord > "$WORK/pg/pwfile"
if [ "$(id -u)" = 0 ]; then chown -R postgres "$WORK/pg"; chmod 700 "$WORK/pg"; chmod 711 "$WORK"; fi
asPG "$PGBIN/initdb" -D "$PGDATA" -U postgres --pwfile "$WORK/pg/pwfile" --auth-local=trust \
	--auth-host=scram-sha-256 -E UTF8 --locale=C -N >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log" >&2; exit 1; }
# The settings of internal/testkit/postgres.go.
asPG "$PGBIN/pg_ctl" -D "$PGDATA" -l "$WORK/pg/postgres.log" -w -t 60 -o "\
-c port=$PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$WORK/pg \
-c wal_level=logical -c max_replication_slots=20 -c max_wal_senders=20 \
-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=128MB \
-c max_connections=100 -c wal_sender_timeout=60s" start >/dev/null

say "starting Kafka 4.4 on 127.0.0.1:$PORT"
"$ROOT/scripts/kafka.sh" start "$PORT" "$WORK/kafka" >/dev/null

# Debezium's plugin directory: its jars, isolated from the worker's, but
# without its slf4j-api 1.7 (the plugin would load it and log nowhere;
# Debezium's own plugin archive leaves it out too).
mkdir -p "$WORK/plugins/debezium-connector-postgres"
for j in "$DBZ"/libs/*.jar; do
	case "$(basename "$j")" in slf4j-*) ;; *) cp "$j" "$WORK/plugins/debezium-connector-postgres/" ;; esac
done
# Debezium 3.6.1 calls a Kafka class that Kafka 4.4 moved: see
# shim/Sanitizer.java. The plugin's class loader finds the delegate here
# after the worker's loader does not.
mkdir -p "$WORK/shim"
javac -nowarn -d "$WORK/shim" -cp "$CP" "$HERE/shim/Sanitizer.java"
jar cf "$WORK/plugins/debezium-connector-postgres/fjord-kafka44-sanitizer-shim.jar" -C "$WORK/shim" .

cat > "$WORK/worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:$PORT
group.id=fjord-dbz-golden
config.storage.topic=connect-configs
offset.storage.topic=connect-offsets
status.storage.topic=connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.flush.interval.ms=1000
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
    Logger: [ { name: io.debezium, level: INFO } ]
LOG
say "starting Kafka Connect 4.4 (REST on 127.0.0.1:$REST)"
# UTC: nothing Debezium emits should depend on the JVM's zone, but if it
# does, the golden files are UTC.
nohup java -Xmx768m -Duser.timezone=UTC -Dlog4j2.configurationFile="$WORK/log4j2.yaml" -cp "$DBZ/worker-libs/*:$CP" \
	org.apache.kafka.connect.cli.ConnectDistributed "$WORK/worker.properties" >"$WORK/connect.log" 2>&1 &
echo $! > "$WORK/connect.pid"

"$PY" "$HERE/capture.py" --bootstrap "127.0.0.1:$PORT" --rest "http://127.0.0.1:$REST" \
	--pg-port "$PGPORT" --psql "$PGBIN/psql" --dir "$HERE" --connect-log "$WORK/connect.log"
say "done; review with: git diff --stat -- $HERE"
