import sys, json, time
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

addr, group, topics, n = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
c = Consumer({"bootstrap.servers": addr, "group.id": group, "client.id": "ck-reader",
              "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe(topics)
got = []
deadline = time.time() + 30
while len(got) < n and time.time() < deadline:
    m = c.poll(0.2)
    if m is None:
        continue
    if m.error():
        sys.exit("consume error: %s" % m.error())
    got.append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(), "key": m.key().decode(),
                "value": None if m.value() is None else m.value().decode(),
                "headers": [[k, v.decode()] for k, v in (m.headers() or [])]})
c.commit(asynchronous=False)
a = AdminClient({"bootstrap.servers": addr})
g = a.list_groups(group, timeout=10)[0]
groups = {"state": g.state, "protocol_type": g.protocol_type, "members": [m.client_id for m in g.members]}
c.close()
print(json.dumps({"records": got, "group": groups}))
