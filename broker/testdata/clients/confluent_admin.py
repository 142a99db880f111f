import sys, json
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource

addr, topics = sys.argv[1], json.loads(sys.argv[2])
a = AdminClient({"bootstrap.servers": addr, "client.id": "ck-admin"})
out = {}
for t, f in a.create_topics([NewTopic(n, p, 1, config={"retention.ms": "3600000"}) for n, p in topics.items()]).items():
    f.result()
for t, f in a.create_topics([NewTopic(next(iter(topics)), 1, 1)]).items():
    try:
        f.result()
        out["duplicate"] = "accepted"
    except KafkaException as e:
        out["duplicate"] = e.args[0].name()
a.create_topics([NewTopic("ck-scratch", 2, 1)])["ck-scratch"].result()
md = a.list_topics(timeout=10)
out["listed"] = {n: len(t.partitions) for n, t in md.topics.items()}
out["brokers"] = ["%d@%s:%d" % (b.id, b.host, b.port) for b in md.brokers.values()]
out["retention"] = {}
for res, f in a.describe_configs([ConfigResource("topic", n) for n in topics]).items():
    e = f.result()["retention.ms"]
    out["retention"][res.name] = [e.value, str(int(e.source))]
a.delete_topics(["ck-scratch"])["ck-scratch"].result()
out["after_delete"] = sorted(a.list_topics(timeout=10).topics)
print(json.dumps(out))
