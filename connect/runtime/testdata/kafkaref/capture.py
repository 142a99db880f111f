#!/usr/bin/python3
"""capture.py BOOTSTRAP REST_URL OUTDIR — run by gen.sh against Kafka
Connect 4.4; writes validate/*.json, rest.json, internal_topics.json and
dlq.json under OUTDIR. Worker ids are replaced by <worker>, stack traces by
their first line, timestamps by 0, so reruns differ only when Kafka does."""
import json, os, sys, time, urllib.request, urllib.error
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

BOOT, REST, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
WORKER = REST.split('//')[1]


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(REST + path, data=data, method=method,
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


def wait(what, fn, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if fn():
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit('timed out waiting for ' + what)


def scrub(v):
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items()}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    if isinstance(v, str):
        v = v.replace(WORKER, '<worker>')
        if '\n\tat ' in v:
            v = v.split('\n')[0] + '\n<stack trace>'
    return v


def dump(name, obj):
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(scrub(obj), f, indent=2)
        f.write('\n')


SINK = 'dev.fjord.golden.GoldenSinkConnector'
SOURCE = 'dev.fjord.golden.GoldenSourceConnector'
T = 'dev.fjord.golden.GoldenTransform'
P = 'dev.fjord.golden.GoldenPredicate'
JSONC = 'org.apache.kafka.connect.json.JsonConverter'
VALIDATE = [
    ('sink_valid', 'a complete FileStreamSink-like config', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't1,t2', 'file': '/tmp/out.txt'}),
    ('sink_missing_file', 'file is optional; name missing', SINK,
     {'connector.class': SINK, 'topics': 't1'}),
    ('sink_no_topics', 'neither topics nor topics.regex', SINK,
     {'connector.class': SINK, 'name': 'v'}),
    ('sink_both_topics', 'topics and topics.regex together', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'topics.regex': 't.*'}),
    ('sink_bad_regex', 'topics.regex does not compile', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics.regex': '(['}),
    ('sink_dlq_in_topics', 'DLQ topic also consumed', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't,dlq', 'errors.deadletterqueue.topic.name': 'dlq',
      'errors.tolerance': 'all'}),
    ('tasks_max_zero', 'tasks.max below its minimum', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'tasks.max': '0'}),
    ('tasks_max_nan', 'tasks.max not a number', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'tasks.max': 'many'}),
    ('bad_converter', 'converter classes that do not exist or are not converters', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'key.converter': JSONC,
      'value.converter': 'com.example.NoSuchConverter', 'header.converter': JSONC}),
    ('unknown_transform', 'a transform alias whose type does not exist', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'x',
      'transforms.x.type': 'com.example.NoSuchTransform'}),
    ('transform_missing_type', 'a transform alias with no type', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'x'}),
    ('transform_predicate', 'a transform with a predicate, both missing a required key', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'a,b', 'transforms.a.type': T,
      'transforms.a.predicate': 'p', 'transforms.a.negate': 'true', 'transforms.b.type': T,
      'transforms.b.field': 'f', 'transforms.b.times': '11', 'predicates': 'p', 'predicates.p.type': P}),
    ('transform_valid', 'a transform and a predicate, complete', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'a', 'transforms.a.type': T,
      'transforms.a.field': 'f', 'transforms.a.predicate': 'p', 'predicates': 'p',
      'predicates.p.type': P, 'predicates.p.pattern': 'x.*'}),
    ('negate_without_predicate', 'negate set but no predicate', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'a', 'transforms.a.type': T,
      'transforms.a.field': 'f', 'transforms.a.negate': 'true'}),
    ('duplicate_alias', 'the same transform alias twice', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'transforms': 'a,a', 'transforms.a.type': T,
      'transforms.a.field': 'f'}),
    ('errors_bad', 'bad error-handling values', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'errors.tolerance': 'some',
      'errors.retry.timeout': 'soon', 'errors.log.enable': 'yes', 'config.action.reload': 'maybe'}),
    ('source_valid', 'a source with its required topic', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'topic': 'out'}),
    ('source_missing_topic', 'a source without its required topic, count below minimum', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'count': '-1'}),
    ('source_topic_creation', 'KIP-158 topic creation groups', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'topic': 'out', 'topic.creation.groups': 'g1',
      'topic.creation.default.replication.factor': '1', 'topic.creation.default.partitions': '3',
      'topic.creation.default.cleanup.policy': 'compact',
      'topic.creation.g1.include': 'out.*', 'topic.creation.g1.partitions': '1'}),
    ('source_topic_creation_bad', 'KIP-158 defaults missing or invalid', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'topic': 'out', 'topic.creation.groups': 'g1',
      'topic.creation.default.partitions': '0'}),
    ('source_eos', 'exactly.once.support and transaction.boundary values', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'topic': 'out', 'exactly.once.support': 'required',
      'transaction.boundary': 'connector'}),
    ('source_bad_eos', 'bad exactly.once.support', SOURCE,
     {'connector.class': SOURCE, 'name': 's', 'topic': 'out', 'exactly.once.support': 'always'}),
    ('unknown_connector', 'a connector class that does not exist', 'com.example.NoSuchConnector',
     {'connector.class': 'com.example.NoSuchConnector', 'name': 'v'}),
    ('no_connector_class', 'no connector.class at all', SINK,
     {'name': 'v', 'topics': 't'}),
    ('alias_class', 'the connector named by its short alias', 'GoldenSink',
     {'connector.class': 'GoldenSink', 'name': 'v', 'topics': 't'}),
    ('client_overrides', 'producer/consumer/admin overrides (policy All)', SINK,
     {'connector.class': SINK, 'name': 'v', 'topics': 't', 'consumer.override.max.poll.records': '10',
      'admin.override.client.id': 'x', 'producer.override.acks': '1'}),
]


def main():
    wait('Kafka Connect REST', lambda: call('GET', '/')[0] == 200, 120)
    wait('golden plugins', lambda: any(p['class'] == SINK for p in call('GET', '/connector-plugins')[1]), 60)
    for name, note, plugin, cfg in VALIDATE:
        st, body = call('PUT', '/connector-plugins/%s/config/validate' % plugin, cfg)
        dump('validate/%s.json' % name, {'note': note, 'plugin': plugin, 'config': cfg, 'status': st, 'response': body})

    rest = []

    def rec(note, method, path, body=None):
        st, resp = call(method, path, body)
        rest.append({'note': note, 'method': method, 'path': path, 'body': body, 'status': st, 'response': resp})
        return st, resp

    rec('create with an invalid config', 'POST', '/connectors',
        {'name': 'bad', 'config': {'connector.class': SINK, 'tasks.max': '0'}})
    src = {'connector.class': SOURCE, 'tasks.max': '1', 'topic': 'golden-topic', 'count': '3'}
    rec('create a source', 'POST', '/connectors', {'name': 'golden-source', 'config': src})

    def src_done():
        st, o = call('GET', '/connectors/golden-source/offsets')
        return st == 200 and any(x['offset'].get('position') == 2 for x in o['offsets'])
    wait('source offsets', src_done)
    rec('source status', 'GET', '/connectors/golden-source/status')
    rec('source offsets', 'GET', '/connectors/golden-source/offsets')
    rec('source topics', 'GET', '/connectors/golden-source/topics')
    rec('alter offsets while running', 'PATCH', '/connectors/golden-source/offsets',
        {'offsets': [{'partition': {'file': 'golden'}, 'offset': {'position': 10}}]})
    rec('stop the source', 'PUT', '/connectors/golden-source/stop')
    wait('source stopped', lambda: call('GET', '/connectors/golden-source/status')[1]['connector']['state'] == 'STOPPED')
    rec('stopped source status', 'GET', '/connectors/golden-source/status')
    rec('alter offsets', 'PATCH', '/connectors/golden-source/offsets',
        {'offsets': [{'partition': {'file': 'golden'}, 'offset': {'position': 10}},
                     {'partition': {'file': 'other'}, 'offset': None}]})
    rec('offsets after alter', 'GET', '/connectors/golden-source/offsets')
    rec('reset offsets', 'DELETE', '/connectors/golden-source/offsets')
    rec('offsets after reset', 'GET', '/connectors/golden-source/offsets')

    sink = {'connector.class': SINK, 'tasks.max': '1', 'topics': 'golden-topic'}
    rec('create a sink', 'POST', '/connectors', {'name': 'golden-sink', 'config': sink})

    def sink_done():
        st, o = call('GET', '/connectors/golden-sink/offsets')
        return st == 200 and any(x['offset'].get('kafka_offset') == 3 for x in o['offsets'])
    wait('sink offsets', sink_done)
    rec('sink offsets', 'GET', '/connectors/golden-sink/offsets')
    rec('pause the sink', 'PUT', '/connectors/golden-sink/pause')
    wait('sink paused', lambda: call('GET', '/connectors/golden-sink/status')[1]['connector']['state'] == 'PAUSED')
    rec('paused sink status', 'GET', '/connectors/golden-sink/status')
    rec('resume the sink', 'PUT', '/connectors/golden-sink/resume')
    wait('sink running', lambda: call('GET', '/connectors/golden-sink/status')[1]['tasks'][0]['state'] == 'RUNNING')
    rec('restart with tasks', 'POST', '/connectors/golden-sink/restart?includeTasks=true&onlyFailed=false')
    wait('sink running again', lambda: call('GET', '/connectors/golden-sink/status')[1]['tasks'][0]['state'] == 'RUNNING')
    rec('sink topics', 'GET', '/connectors/golden-sink/topics')
    rec('sink tasks', 'GET', '/connectors/golden-sink/tasks')
    rec('stop the sink', 'PUT', '/connectors/golden-sink/stop')
    wait('sink stopped', lambda: call('GET', '/connectors/golden-sink/status')[1]['connector']['state'] == 'STOPPED')
    rec('alter sink offsets', 'PATCH', '/connectors/golden-sink/offsets',
        {'offsets': [{'partition': {'kafka_topic': 'golden-topic', 'kafka_partition': 0}, 'offset': {'kafka_offset': 1}}]})
    rec('sink offsets after alter', 'GET', '/connectors/golden-sink/offsets')
    rec('delete the sink', 'DELETE', '/connectors/golden-sink')

    # Dead letter queue: a record the JsonConverter cannot parse.
    prod = KafkaProducer(bootstrap_servers=BOOT)
    prod.send('dlq-src', key=b'k1', value=b'not json', headers=[('h1', b'v1')]).get(30)
    prod.send('dlq-src', key=b'k2', value=b'{"ok":true}').get(30)
    prod.close()
    dlq = {'connector.class': SINK, 'tasks.max': '1', 'topics': 'dlq-src',
           'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
           'value.converter': JSONC, 'value.converter.schemas.enable': 'false',
           'errors.tolerance': 'all', 'errors.deadletterqueue.topic.name': 'golden-dlq',
           'errors.deadletterqueue.topic.replication.factor': '1',
           'errors.deadletterqueue.context.headers.enable': 'true'}
    rec('create a sink with a DLQ', 'POST', '/connectors', {'name': 'golden-dlq', 'config': dlq})
    cons = KafkaConsumer('golden-dlq', bootstrap_servers=BOOT, auto_offset_reset='earliest',
                         consumer_timeout_ms=60000, enable_auto_commit=False)
    dlq_records = []
    for m in cons:
        dlq_records.append({'topic': m.topic, 'partition': m.partition, 'offset': m.offset,
                            'key': m.key.decode(), 'value': m.value.decode(),
                            'headers': [[k, v.decode()] for k, v in m.headers]})
        break
    cons.close()
    dump('dlq.json', {'note': 'the record Kafka Connect 4.4 writes to the DLQ for a JsonConverter failure',
                      'connector': dlq, 'records': dlq_records})
    rec('delete the DLQ sink', 'DELETE', '/connectors/golden-dlq')
    time.sleep(2)
    dump('rest.json', rest)

    topics = {}
    for t in ('connect-configs', 'connect-status', 'connect-offsets'):
        cons = KafkaConsumer(bootstrap_servers=BOOT, enable_auto_commit=False)
        parts = [TopicPartition(t, p) for p in sorted(cons.partitions_for_topic(t))]
        cons.assign(parts)
        cons.seek_to_beginning(*parts)
        ends = cons.end_offsets(parts)
        recs = []
        for tp in parts:
            while cons.position(tp) < ends[tp]:
                for batch in cons.poll(timeout_ms=2000).values():
                    for m in batch:
                        recs.append({'partition': m.partition, 'offset': m.offset,
                                     'key': m.key.decode() if m.key is not None else None,
                                     'value': m.value.decode() if m.value is not None else None})
        cons.close()
        recs.sort(key=lambda r: (r['partition'], r['offset']))
        admin_cfg = None
        topics[t] = {'partitions': len(parts), 'records': recs}
    dump('internal_topics.json', topics)


main()
