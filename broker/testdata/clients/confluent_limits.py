import sys, json, os, time
from confluent_kafka import Producer, Consumer, TopicPartition

addr, topic = sys.argv[1], sys.argv[2]
# message.max.bytes above the broker's limit, so that the broker (not
# librdkafka's own size check, which fails produce() itself) judges it.
p = Producer({"bootstrap.servers": addr, "message.max.bytes": 4000000, "compression.type": "none"})
out = {}
def send(value, key):
    res = []
    p.produce(topic, value=value, on_delivery=lambda err, msg: res.append((err, msg)))
    p.flush(30)
    err, msg = res[0]
    if err:
        out[key] = "%s code=%d %s" % (err.name(), err.code(), err.str())
    else:
        out[key] = msg.offset()
send(b"x" * (900 << 10), "big_offset")
send(os.urandom(1100 << 10), "too_large")
send(b"after", "after_offset")
c = Consumer({"bootstrap.servers": addr, "group.id": "ck-limits", "enable.auto.commit": False})
c.assign([TopicPartition(topic, 0, 0)])
out["read_lens"], out["read_offsets"] = [], []
deadline = time.time() + 20
while len(out["read_lens"]) < 2 and time.time() < deadline:
    m = c.poll(0.2)
    if m is None or m.error():
        continue
    out["read_lens"].append(len(m.value()))
    out["read_offsets"].append(m.offset())
c.close()
print(json.dumps(out))
