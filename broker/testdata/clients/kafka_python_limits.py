import sys, json, os
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
import kafka.errors as Errors

addr, topic = sys.argv[1], sys.argv[2]
# max_request_size above the broker's limit, so that the broker (not
# kafka-python's own size check) judges the oversized record.
p = KafkaProducer(bootstrap_servers=addr, max_request_size=4 << 20)
out = {"big_offset": p.send(topic, value=b"x" * (900 << 10)).get(30).offset}
try:
    p.send(topic, value=os.urandom(1100 << 10)).get(30)
    out["too_large"] = "accepted"
except Errors.KafkaError as e:
    out["too_large"] = "%s errno=%s retriable=%s %s" % (type(e).__name__, e.errno, e.retriable, e)
out["after_offset"] = p.send(topic, value=b"after").get(30).offset
p.close()
c = KafkaConsumer(bootstrap_servers=addr, auto_offset_reset="earliest", consumer_timeout_ms=20000)
c.assign([TopicPartition(topic, 0)])
out["read_lens"], out["read_offsets"] = [], []
for m in c:
    out["read_lens"].append(len(m.value))
    out["read_offsets"].append(m.offset)
    if len(out["read_lens"]) == 2:
        break
c.close()
print(json.dumps(out))
