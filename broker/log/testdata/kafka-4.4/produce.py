from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({'bootstrap.servers':'127.0.0.1:19292'})
f = a.create_topics([NewTopic('g1', 1, 1)])
for t, fu in f.items(): fu.result()
import time
ts0 = 1700000000000
for pi, comp in enumerate(['none','gzip','lz4','zstd','snappy']):
    p = Producer({'bootstrap.servers':'127.0.0.1:19292','enable.idempotence':True,'linger.ms':20,'compression.type':comp})
    for i in range(40):
        # non-monotonic timestamps across producers
        p.produce('g1', key=b'key-%d' % (i % 6), value=(b'value-%d-%d ' % (pi, i)) * 3, partition=0, timestamp=ts0 + (i * 997 + pi * 5000) % 60000)
        if i % 8 == 7: p.flush()
    p.flush()
p = Producer({'bootstrap.servers':'127.0.0.1:19292','enable.idempotence':False,'linger.ms':0})
for i in range(10):
    p.produce('g1', key=None, value=b'plain %d' % i, partition=0, timestamp=ts0 + 100000 + i)
    p.flush()
p.produce('g1', key=b'key-1', value=None, partition=0, timestamp=ts0+200000); p.flush()
