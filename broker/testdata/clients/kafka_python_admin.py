import sys, json
from kafka import KafkaAdminClient
from kafka.admin import NewTopic, ConfigResource, ConfigResourceType
from kafka import codec
import kafka.errors as Errors

addr, topics = sys.argv[1], json.loads(sys.argv[2])
a = KafkaAdminClient(bootstrap_servers=addr, client_id="py-admin")
out = {"api_version": list(a.config["api_version"])}
a.create_topics([NewTopic(n, p, 1, topic_configs={"retention.ms": "3600000"}) for n, p in topics.items()])
try:
    a.create_topics([NewTopic(next(iter(topics)), 1, 1)])
    out["duplicate"] = "accepted"
except Errors.TopicAlreadyExistsError as e:
    out["duplicate"] = type(e).__name__
a.create_topics([NewTopic("py-scratch", 2, 1)])
out["listed"] = sorted(a.list_topics())
out["retention"] = {}
for resp in a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, n) for n in topics]):
    for res in resp.resources:
        for e in res[4]:
            if e[0] == "retention.ms":
                out["retention"][res[3]] = [e[1], str(e[3])]
a.delete_topics(["py-scratch"])
out["after_delete"] = sorted(a.list_topics())
# Debian's kafka-python has gzip from the standard library; the others
# need modules Debian may not ship.
out["codecs"] = ["none", "gzip"] + [c for c, have in (("snappy", codec.has_snappy), ("lz4", codec.has_lz4), ("zstd", codec.has_zstd)) if have()]
a.close()
print(json.dumps(out))
