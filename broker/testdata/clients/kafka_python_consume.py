import sys, json
from kafka import KafkaConsumer, TopicPartition

addr, group, topics, n = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
c = KafkaConsumer(bootstrap_servers=addr, group_id=group or None, client_id="py-reader",
                  auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=20000)
if group:
    c.subscribe(topics)
else:
    c.assign([TopicPartition(t, p) for t in topics for p in c.partitions_for_topic(t)])
got = []
for m in c:
    got.append({"topic": m.topic, "partition": m.partition, "offset": m.offset, "key": m.key.decode(),
                "value": None if m.value is None else m.value.decode(),
                "headers": [[k, v.decode()] for k, v in m.headers]})
    if len(got) >= n:
        break
if group:
    c.commit()
c.close()
print(json.dumps(got))
