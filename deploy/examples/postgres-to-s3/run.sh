#!/usr/bin/env bash
# run.sh — stream Postgres changes to S3 through a running `fjord dev`.
#
# Starts a throwaway PostgreSQL 15 (wal_level=logical) and a throwaway
# MinIO, POSTs the Debezium-compatible CDC source (cdc.json) and the S3
# sink (s3-sink.json, Parquet files in hourly folders) to Fjord's Kafka
# Connect REST API, makes a few changes and prints what landed in S3.
# Everything it started is stopped and removed on exit, the connectors
# deleted. See README.md.
#
# Needs: `make run` (or `bin/fjord dev`) in another terminal, Go, curl,
# the postgresql-15 server binaries (`make deps`).
#
# Environment:
#   FJORD_HTTP    Fjord's HTTP address (Connect REST API)  [127.0.0.1:8083]
#   FJORD_KAFKA   Fjord's Kafka address (checked only)     [127.0.0.1:9092]
#   FJORD_PG_BIN  PostgreSQL server binaries  [/usr/lib/postgresql/15/bin]
#   KEEP=1        leave the connectors, Postgres and MinIO running until
#                 Enter is pressed (to look around), then clean up
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
FJORD_HTTP="${FJORD_HTTP:-127.0.0.1:8083}"
FJORD_KAFKA="${FJORD_KAFKA:-127.0.0.1:9092}"
PG_BIN="${FJORD_PG_BIN:-/usr/lib/postgresql/15/bin}"
REST="http://$FJORD_HTTP"

RUN="$(date +%s)"          # names are unique per run: Connect keeps a
TOPIC_PREFIX="shop_$RUN"   # connector's offsets, and a sink group its
CDC_NAME="pg-cdc-$RUN"     # position, after the connector is deleted
SINK_NAME="s3-sink-$RUN"
BUCKET="fjord-example"
S3_ACCESS_KEY="fjordexample"
S3_SECRET_KEY="fjordexample-secret"
PG_PASSWORD="fjord"

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nerror: %s\n' "$*" >&2; exit 1; }

# ---- cleanup: everything this script started, in reverse order ---------
WORK="" PGDIR="" MINIO_PID="" PG_STARTED="" CONNECTORS=()
cleanup() {
	set +e
	for c in "${CONNECTORS[@]}"; do
		curl -s -o /dev/null -X DELETE "$REST/connectors/$c" && echo "deleted connector $c"
	done
	if [ -n "$PG_STARTED" ]; then
		as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m fast -w -t 20 stop >/dev/null && echo "stopped PostgreSQL"
	fi
	if [ -n "$MINIO_PID" ]; then
		kill "$MINIO_PID" 2>/dev/null && wait "$MINIO_PID" 2>/dev/null
		echo "stopped MinIO"
	fi
	[ -n "$PGDIR" ] && rm -rf "$PGDIR"
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Postgres refuses to run as root: run its programs as the postgres user.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# free_port prints a loopback port nothing listens on.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free loopback port found"
}

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND twice a second.
wait_for() {
	local secs=$1 what=$2
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || die "timed out after ${secs}s waiting for $what"
		sleep 0.5
	done
}

psql_shop() {
	as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PGDIR" -p "$PG_PORT" -U postgres -d shop "$@"
}

# ---- 1. Fjord is up and has both connectors --------------------------------
say "checking fjord dev at $REST (Kafka $FJORD_KAFKA)"
curl -fs -o /dev/null "$REST/" ||
	die "no Fjord Connect REST API at $REST: run \`make run\` in another terminal (or set FJORD_HTTP)"
(exec 3<>"/dev/tcp/${FJORD_KAFKA%:*}/${FJORD_KAFKA##*:}") 2>/dev/null ||
	die "nothing listens on Kafka address $FJORD_KAFKA (set FJORD_KAFKA to fjord dev's --kafka-addr)"
# By the class names the configs use (the plugin list shows Fjord's own
# names for some; these are aliases of them).
for class in io.debezium.connector.postgresql.PostgresConnector io.confluent.connect.s3.S3SinkConnector; do
	curl -fs -o /dev/null "$REST/connector-plugins/$class/config" ||
		die "this Fjord has no $class plugin: rebuild it (\`make build\`) and restart \`make run\`"
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/fjord-pg-s3.XXXXXX")"

# ---- 2. MinIO ----------------------------------------------------------------
say "starting MinIO"
"$ROOT/scripts/s3-server.sh" # builds .cache/bin/minio once (several minutes)
S3_PORT="$(free_port)"
S3_URL="http://127.0.0.1:$S3_PORT"
mkdir -p "$WORK/minio"
MINIO_ROOT_USER="$S3_ACCESS_KEY" MINIO_ROOT_PASSWORD="$S3_SECRET_KEY" MINIO_BROWSER=off \
	"$ROOT/.cache/bin/minio" server --quiet --address "127.0.0.1:$S3_PORT" "$WORK/minio" \
	>"$WORK/minio.log" 2>&1 &
MINIO_PID=$!
minio_up() {
	kill -0 "$MINIO_PID" 2>/dev/null || die "MinIO exited: $(cat "$WORK/minio.log")"
	curl -fs -o /dev/null "$S3_URL/minio/health/live"
}
wait_for 30 "MinIO on $S3_URL" minio_up
echo "MinIO: $S3_URL (data in $WORK/minio)"

# ---- 3. PostgreSQL with logical decoding -------------------------------------
say "starting PostgreSQL 15"
[ -x "$PG_BIN/postgres" ] || die "no PostgreSQL server in $PG_BIN: install postgresql-15 (\`make deps\`) or set FJORD_PG_BIN"
# Its own directory the postgres OS user owns (the work dir is private).
PGDIR="$(mktemp -d "${TMPDIR:-/tmp}/fjord-pg-s3-pg.XXXXXX")"
chmod 700 "$PGDIR"
echo "$PG_PASSWORD" >"$PGDIR/pwfile"
if [ "$(id -u)" = 0 ]; then
	chown -R postgres:postgres "$PGDIR"
fi
as_pg "$PG_BIN/initdb" -D "$PGDIR/data" -U postgres --pwfile="$PGDIR/pwfile" -E UTF8 --locale=C -N \
	--auth-local=trust --auth-host=scram-sha-256 >"$PGDIR/initdb.log" 2>&1 ||
	die "initdb failed: $(cat "$PGDIR/initdb.log")"
PG_PORT="$(free_port)"
as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w -t 30 start -o \
	"-c wal_level=logical -c port=$PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$PGDIR -c max_replication_slots=4 -c max_wal_senders=4" \
	>/dev/null || die "PostgreSQL did not start: $(cat "$PGDIR/postgres.log")"
PG_STARTED=1
echo "PostgreSQL: 127.0.0.1:$PG_PORT (user postgres, password $PG_PASSWORD)"
as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PGDIR" -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE shop"
psql_shop <<'SQL'
CREATE TABLE orders (
  id       int PRIMARY KEY,
  customer text NOT NULL,
  total    numeric(12,2),
  placed   timestamptz NOT NULL DEFAULT now(),
  shipped  boolean NOT NULL DEFAULT false
);
-- The whole old row in the before of updates and deletes (by default
-- Postgres logs only the primary key of a deleted row).
ALTER TABLE orders REPLICA IDENTITY FULL;
INSERT INTO orders (id, customer, total) VALUES
  (1, 'ada', 19.90), (2, 'grace', 250.00), (3, 'linus', 7.25);
SQL
SNAPSHOT_ROWS=3
echo "table shop.public.orders with $SNAPSHOT_ROWS rows"

# ---- 4. The connector configs and the bucket -----------------------------------
say "building the example's S3 client (s3tool)"
(cd "$ROOT" && go build -o "$WORK/s3tool" ./deploy/examples/postgres-to-s3/s3tool)
fill() {
	sed -e "s|@CDC_NAME@|$CDC_NAME|g" -e "s|@SINK_NAME@|$SINK_NAME|g" -e "s|@TOPIC_PREFIX@|$TOPIC_PREFIX|g" \
		-e "s|@PG_PORT@|$PG_PORT|g" -e "s|@PG_PASSWORD@|$PG_PASSWORD|g" -e "s|@BUCKET@|$BUCKET|g" \
		-e "s|@S3_URL@|$S3_URL|g" -e "s|@S3_ACCESS_KEY@|$S3_ACCESS_KEY|g" -e "s|@S3_SECRET_KEY@|$S3_SECRET_KEY|g" \
		"$HERE/$1" >"$WORK/$1"
}
fill cdc.json
fill s3-sink.json
s3tool() { "$WORK/s3tool" -config "$WORK/s3-sink.json" "$@"; }
s3tool mkbucket
echo "bucket $BUCKET created"

# ---- 5. The connectors ---------------------------------------------------------
# post FILE NAME: create a connector and wait until it and its tasks run.
post() {
	local file=$1 name=$2 code
	code="$(curl -sS -o "$WORK/post.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data @"$WORK/$file" "$REST/connectors")"
	[ "$code" = 201 ] || die "POST $file: HTTP $code: $(cat "$WORK/post.out")"
	CONNECTORS+=("$name")
	running() {
		local st
		st="$(curl -fsS "$REST/connectors/$name/status" 2>/dev/null)" || return 1
		grep -q '"state":"FAILED"' <<<"$st" && die "connector $name failed: $st"
		# The connector and at least one task, all RUNNING.
		grep -q '"tasks":\[{' <<<"$st" && ! grep -o '"state":"[A-Z]*"' <<<"$st" | grep -qv RUNNING
	}
	wait_for 60 "connector $name to run" running
	echo "$name: RUNNING"
}
say "creating the CDC source $CDC_NAME (topic $TOPIC_PREFIX.public.orders)"
post cdc.json "$CDC_NAME"
say "creating the S3 sink $SINK_NAME (Parquet, hourly folders, a commit every 3s)"
post s3-sink.json "$SINK_NAME"

# records_in_s3 N: true once the objects hold N records.
records_in_s3() {
	local n
	n="$(s3tool count topics/ 2>/dev/null)" || return 1
	[ "$n" -ge "$1" ]
}
say "waiting for the snapshot ($SNAPSHOT_ROWS rows) to land in S3"
wait_for 90 "the snapshot in S3" records_in_s3 "$SNAPSHOT_ROWS"
# Changes made before the snapshot would have been read as part of it.

# ---- 6. Changes while streaming ---------------------------------------------------
say "changing the table: 2 inserts, 2 updates, 1 delete"
psql_shop <<'SQL'
INSERT INTO orders (id, customer, total) VALUES (4, 'barbara', 99.99), (5, 'ken', 0.50);
UPDATE orders SET shipped = true WHERE id IN (1, 2);
DELETE FROM orders WHERE id = 3;
SQL
EXPECTED=$((SNAPSHOT_ROWS + 5)) # the delete's tombstone is not written (behavior.on.null.values=ignore)
wait_for 90 "$EXPECTED change events in S3" records_in_s3 "$EXPECTED"

# ---- 7. What landed -------------------------------------------------------------
say "objects in s3://$BUCKET"
s3tool ls
say "their change events (op, before, after)"
s3tool -fields op,before,after dump topics/
say "done: $EXPECTED change events in S3"

if [ "${KEEP:-}" = 1 ]; then
	echo "KEEP=1: MinIO $S3_URL (keys $S3_ACCESS_KEY / $S3_SECRET_KEY), PostgreSQL 127.0.0.1:$PG_PORT;"
	read -r -p "press Enter to clean up " _
fi
