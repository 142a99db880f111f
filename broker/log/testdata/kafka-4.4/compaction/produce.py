from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
import time
a = AdminClient({'bootstrap.servers':'127.0.0.1:19292'})
for t, f in a.create_topics([NewTopic('cmp', 1, 1, config={'cleanup.policy':'delete','segment.ms':'300','retention.ms':'-1'})]).items(): f.result()
ts0 = 1700000000000
def burst(p, items, ts):
    for i, (k, v) in enumerate(items):
        p.produce('cmp', key=k, value=v, partition=0, timestamp=ts + i)
    p.flush()
idem = Producer({'bootstrap.servers':'127.0.0.1:19292','enable.idempotence':True,'linger.ms':20,'compression.type':'none'})
plain = Producer({'bootstrap.servers':'127.0.0.1:19292','linger.ms':20,'compression.type':'none'})
gz = Producer({'bootstrap.servers':'127.0.0.1:19292','linger.ms':20,'compression.type':'gzip'})
# segment 1: idempotent producer writes a, b (later overwritten) 
burst(idem, [(b'a', b'a1'), (b'b', b'b1')], ts0)
burst(plain, [(b'c', b'c1'), (b'd', b'd1'), (b'a', b'a2')], ts0 + 100)
time.sleep(0.5)
burst(gz, [(b'b', b'b2'), (b'e', b'e1'), (b'c', b'c2'), (b'f', b'f1')], ts0 + 1000)
burst(plain, [(b'd', None), (b'g', b'g1')], ts0 + 1100)
time.sleep(0.5)
burst(plain, [(b'e', b'e2'), (b'h', b'h1'), (b'g', b'g2')], ts0 + 2000)
burst(gz, [(b'f', None), (b'h', b'h2')], ts0 + 2100)
time.sleep(0.5)
# active segment (uncleanable)
burst(plain, [(b'a', b'a3'), (b'z', b'z1')], ts0 + 3000)
