#!/usr/bin/python3
"""capture.py — run by gen.sh against PostgreSQL 15, Kafka 4.4 and Kafka
Connect 4.4 with Debezium 3.6.1 on its plugin path. For each run of RUNS:
a fresh database from fixture_snapshot.sql, a PostgresConnector, its
snapshot, fixture_stream.sql, then every record of the run's topics into
<run>.jsonl and the connector's config into <run>.config.json. Then the
validate answers (validate_*.json). Nothing is scrubbed: the fields that
vary from run to run are listed in README.md."""
import argparse
import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

from kafka import KafkaConsumer, TopicPartition

ap = argparse.ArgumentParser()
ap.add_argument('--bootstrap', required=True)
ap.add_argument('--rest', required=True)
ap.add_argument('--pg-port', required=True)
ap.add_argument('--psql', required=True)
ap.add_argument('--dir', required=True)
ap.add_argument('--connect-log', required=True)
A = ap.parse_args()

DB = 'fjord'
PASSWORD = 'fjord'  # internal/testkit's PostgresPassword
JSONC = 'org.apache.kafka.connect.json.JsonConverter'

# Every run sets only what it needs beyond Debezium's defaults; the
# topic prefix, slot and publication derive from the run's name so nothing is
# shared between runs.
RUNS = [
    ('default', {}),
    ('string_connect_hex', {
        'decimal.handling.mode': 'string',
        'time.precision.mode': 'connect',
        'binary.handling.mode': 'hex',
        'interval.handling.mode': 'string',
        'provide.transaction.metadata': 'true',
        'skipped.operations': 'none',  # Debezium skips truncates by default
    }),
    ('double_micro_base64', {
        'decimal.handling.mode': 'double',
        'time.precision.mode': 'adaptive_time_microseconds',
        'binary.handling.mode': 'base64',
        'heartbeat.interval.ms': '1000',
        'skipped.operations': 'none',
    }),
]


def log(msg):
    print('capture.py: ' + msg, file=sys.stderr, flush=True)


def base_config(run):
    return {
        'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
        'tasks.max': '1',
        'database.hostname': '127.0.0.1',
        'database.port': str(A.pg_port),
        'database.user': 'postgres',
        'database.password': PASSWORD,
        'database.dbname': DB,
        'topic.prefix': run,
        'plugin.name': 'pgoutput',
        # Debezium writes the publication name unquoted into CREATE
        # PUBLICATION, so `default` (a keyword) fails: prefix both.
        'slot.name': 'dbz_' + run,
        'publication.name': 'dbz_' + run,
        'publication.autocreate.mode': 'all_tables',
        'snapshot.mode': 'initial',
        'key.converter': JSONC,
        'key.converter.schemas.enable': 'true',
        'value.converter': JSONC,
        'value.converter.schemas.enable': 'true',
    }


# --- Postgres ---------------------------------------------------------------

def psql(db, *args, timeout=120):
    env = dict(os.environ, PGPASSWORD=PASSWORD, PGTZ='UTC')
    cmd = [A.psql, '-h', '127.0.0.1', '-p', str(A.pg_port), '-U', 'postgres', '-d', db,
           '-v', 'ON_ERROR_STOP=1', '-q', '-X', '-At'] + list(args)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit('psql %s failed: %s' % (' '.join(args), r.stderr.strip()))
    return r.stdout.strip()


def drop_slot(slot):
    """Drops the run's slot once Debezium let go of it (bounded)."""
    end = time.time() + 60
    while time.time() < end:
        state = psql('postgres', '-c', "SELECT active FROM pg_replication_slots WHERE slot_name = '%s'" % slot)
        if state == '':
            return
        if state == 'f':
            psql('postgres', '-c', "SELECT pg_drop_replication_slot('%s')" % slot)
            return
        time.sleep(0.5)
    raise SystemExit('slot %s still active 60 s after the connector was deleted' % slot)


def fresh_database():
    psql('postgres', '-c', 'DROP DATABASE IF EXISTS %s WITH (FORCE)' % DB)
    psql('postgres', '-c', 'CREATE DATABASE %s' % DB)
    psql(DB, '-f', os.path.join(A.dir, 'fixture_snapshot.sql'))
    # Rows the snapshot must emit: every row of every user table.
    return int(psql(DB, '-c', """
        SELECT sum((xpath('/row/c/text()', query_to_xml(
            format('SELECT count(*) AS c FROM %I.%I', schemaname, tablename), false, true, '')))[1]::text::int)
        FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"""))


# --- Kafka Connect REST -----------------------------------------------------

def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(A.rest + path, data=data, method=method,
                                 headers={'Content-Type': 'application/json', 'Accept': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode()


def wait(what, fn, timeout):
    log('waiting for ' + what)
    end = time.time() + timeout
    while time.time() < end:
        try:
            if fn():
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit('timed out after %ds waiting for %s' % (timeout, what))


def connector_running(name):
    code, st = call('GET', '/connectors/%s/status' % name)
    if code != 200:
        return False
    for t in st.get('tasks', []):
        if t['state'] == 'FAILED':
            raise SystemExit('task of %s FAILED:\n%s' % (name, t.get('trace', '')))
    if st['connector']['state'] == 'FAILED':
        raise SystemExit('connector %s FAILED:\n%s' % (name, st['connector'].get('trace', '')))
    return st['connector']['state'] == 'RUNNING' and any(t['state'] == 'RUNNING' for t in st.get('tasks', []))


# --- Kafka ------------------------------------------------------------------

def parse_json(raw):
    if raw is None:
        return None

    def bad_constant(c):
        raise ValueError('non-standard JSON constant ' + c)
    return json.loads(raw.decode('utf-8'), parse_constant=bad_constant)


def header_value(raw):
    if raw is None:
        return None
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        return {'base64': base64.b64encode(raw).decode()}


def read_topics(match):
    """Every record of the topics whose name satisfies match, by topic
    name, then partition, then offset, up to the end offsets of now."""
    c = KafkaConsumer(bootstrap_servers=A.bootstrap, group_id=None, enable_auto_commit=False)
    try:
        topics = sorted(t for t in c.topics() if match(t))
        tps = [TopicPartition(t, p) for t in topics for p in sorted(c.partitions_for_topic(t) or [])]
        if not tps:
            return []
        c.assign(tps)
        c.seek_to_beginning(*tps)
        ends = c.end_offsets(tps)
        got = {tp: [] for tp in tps}
        deadline = time.time() + 60
        while any(c.position(tp) < ends[tp] for tp in tps):
            if time.time() > deadline:
                raise SystemExit('could not read %s to its end within 60 s' % topics)
            for tp, msgs in c.poll(timeout_ms=500).items():
                got[tp].extend(m for m in msgs if m.offset < ends[tp])
        return [m for tp in tps for m in got[tp]]
    finally:
        c.close()


def run_topics(run):
    return lambda t: t.startswith(run + '.') or t == '__debezium-heartbeat.' + run


def op_of(m):
    v = parse_json(m.value)
    if isinstance(v, dict) and isinstance(v.get('payload'), dict):
        return v['payload'].get('op')
    return None


def raw_json(b):
    """The exact JSON text JsonConverter wrote, after checking it is one
    strict JSON value on one line."""
    if b is None:
        return 'null'
    parse_json(b)
    text = b.decode('utf-8')
    if '\n' in text:
        raise SystemExit('a record spans lines: ' + text[:200])
    return text


def record_line(m):
    """One JSON line per record. Key and value are embedded as the bytes
    JsonConverter wrote, so numbers keep Jackson's spelling (1.17549435E-38,
    not a re-rounded float) and object members their order."""
    headers = {}
    for k, v in m.headers or []:
        headers[k] = header_value(v)
    return '{"topic":%s,"partition":%d,"offset":%d,"key":%s,"value":%s,"headers":%s}' % (
        json.dumps(m.topic), m.partition, m.offset, raw_json(m.key), raw_json(m.value),
        json.dumps(headers, ensure_ascii=False, separators=(',', ':')))


# --- runs -------------------------------------------------------------------

def do_run(run, extra):
    log('run %s: fresh database' % run)
    expected = fresh_database()
    cfg = dict(base_config(run), **extra)
    with open(os.path.join(A.dir, run + '.config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)
        f.write('\n')
    code, body = call('PUT', '/connectors/%s/config' % run, cfg)
    if code not in (200, 201):
        raise SystemExit('creating connector %s: %s %s' % (run, code, body))
    wait('connector %s to run' % run, lambda: connector_running(run), 120)
    wait('%d snapshot records of %s' % (expected, run),
         lambda: connector_running(run) and
         sum(1 for m in read_topics(run_topics(run)) if op_of(m) == 'r') >= expected, 240)
    log('run %s: streaming fixture_stream.sql' % run)
    psql(DB, '-f', os.path.join(A.dir, 'fixture_stream.sql'))
    wait('the last streamed event of %s' % run,
         lambda: connector_running(run) and
         any(True for _ in read_topics(lambda t: t == run + '.public.zz_done')), 180)
    if extra.get('heartbeat.interval.ms'):
        wait('a heartbeat of %s' % run,
             lambda: any(True for _ in read_topics(lambda t: t == '__debezium-heartbeat.' + run)), 60)
    # Records of other topics sent before the last one may still be in
    # flight; deleting the connector stops its task, which flushes them.
    time.sleep(2)
    code, body = call('DELETE', '/connectors/%s' % run)
    if code not in (200, 204):
        raise SystemExit('deleting connector %s: %s %s' % (run, code, body))
    wait('connector %s to be gone' % run, lambda: call('GET', '/connectors/%s' % run)[0] == 404, 60)
    drop_slot('dbz_' + run)
    msgs = read_topics(run_topics(run))
    with open(os.path.join(A.dir, run + '.jsonl'), 'w') as f:
        for m in msgs:
            f.write(record_line(m) + '\n')
    topics = sorted({m.topic for m in msgs})
    log('run %s: %d records in %d topics -> %s.jsonl' % (run, len(msgs), len(topics), run))


def validate(name, cfg):
    code, body = call('PUT', '/connector-plugins/PostgresConnector/config/validate', cfg)
    with open(os.path.join(A.dir, 'validate_%s.json' % name), 'w') as f:
        json.dump({'status': code, 'request': cfg, 'response': body}, f, indent=2, ensure_ascii=False)
        f.write('\n')
    errs = body.get('error_count') if isinstance(body, dict) else body
    log('validate_%s.json: HTTP %s, error_count %s' % (name, code, errs))


def has_debezium():
    code, plugins = call('GET', '/connector-plugins')
    return code == 200 and any(p['class'].endswith('.PostgresConnector') for p in plugins)


def main():
    wait('Kafka Connect with PostgresConnector on its plugin path', has_debezium, 180)
    for run, extra in RUNS:
        do_run(run, extra)

    # Validate answers. The database is still up (the last run's).
    ok = dict(base_config('validate'), name='validate')
    validate('ok', ok)
    validate('wrong_password', dict(ok, **{'database.password': 'not-the-password'}))
    bad = dict(ok)
    del bad['database.hostname']  # required, no default
    bad.update({
        'database.port': 'not-a-port',
        'topic.prefix': 'bad prefix!',
        'plugin.name': 'wal2json_bogus',
        'slot.name': 'Bad-Slot',
        'snapshot.mode': 'sometimes',
        'publication.autocreate.mode': 'some_tables',
        'decimal.handling.mode': 'float',
        'time.precision.mode': 'nanos',
        'binary.handling.mode': 'octal',
        'tombstones.on.delete': 'maybe',
        'heartbeat.interval.ms': 'soon',
        'max.batch.size': '-1',
        'poll.interval.ms': 'abc',
        'database.sslmode': 'sometimes',
        'table.include.list': 'public.(',
        'no.such.setting': 'x',
    })
    validate('bad', bad)


if __name__ == '__main__':
    main()
