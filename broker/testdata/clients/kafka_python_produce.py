import sys, json
from kafka import KafkaProducer

addr, recs = sys.argv[1], json.loads(sys.argv[2])
placed = [None] * len(recs)
codecs = []
for r in recs:
    if r["codec"] not in codecs:
        codecs.append(r["codec"])
for c in codecs:
    p = KafkaProducer(bootstrap_servers=addr, client_id="py-producer", linger_ms=20,
                      compression_type=None if c == "none" else c)
    futs = []
    for i, r in enumerate(recs):
        if r["codec"] != c:
            continue
        v = None if r["value"] is None else r["value"].encode()
        futs.append((i, p.send(r["topic"], key=r["key"].encode(), value=v,
                               headers=[(k, v.encode()) for k, v in r["headers"]])))
    p.flush(30)
    for i, f in futs:
        md = f.get(30)
        placed[i] = [md.partition, md.offset]
    p.close()
print(json.dumps({"placed": placed}))
