import sys, json
from confluent_kafka import Producer

addr, recs = sys.argv[1], json.loads(sys.argv[2])
placed = [None] * len(recs)
errors = []
def report(i):
    def cb(err, msg):
        if err:
            errors.append("%s: %s" % (recs[i]["key"], err))
        else:
            placed[i] = [msg.partition(), msg.offset()]
    return cb
codecs = []
for r in recs:
    if r["codec"] not in codecs:
        codecs.append(r["codec"])
for c in codecs:
    p = Producer({"bootstrap.servers": addr, "client.id": "ck-producer", "compression.type": c, "linger.ms": 20})
    for i, r in enumerate(recs):
        if r["codec"] == c:
            v = None if r["value"] is None else r["value"].encode()
            p.produce(r["topic"], key=r["key"].encode(), value=v, headers=[(k, v.encode()) for k, v in r["headers"]],
                      on_delivery=report(i))
    if p.flush(30) != 0:
        errors.append("flush left messages undelivered")
if errors:
    sys.exit("delivery failed: %s" % errors)
print(json.dumps({"placed": placed}))
