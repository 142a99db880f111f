from confluent_kafka.admin import AdminClient, ConfigResource
a = AdminClient({'bootstrap.servers':'127.0.0.1:19292'})
r = ConfigResource('topic', 'cmp', set_config={'cleanup.policy':'compact','segment.ms':'300','retention.ms':'-1','min.cleanable.dirty.ratio':'0.01'})
for k, f in a.alter_configs([r]).items(): print(k, f.result())
