package mm2

import (
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, kv ...string) *Config {
	t.Helper()
	props := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		props[kv[i]] = kv[i+1]
	}
	c, err := Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFlows follows MirrorMakerConfigTest's clusterPairs cases.
func TestFlows(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want []string
	}{
		{"every pair emits heartbeats by default", []string{"clusters", "a, b, c"},
			[]string{"a->b", "a->c", "b->a", "b->c", "c->a", "c->b"}},
		{"no heartbeats, nothing enabled", []string{"clusters", "a, b, c", "emit.heartbeats.enabled", "false"}, nil},
		{"two pairs without heartbeats", []string{"clusters", "a, b, c",
			"a->b.emit.heartbeats.enabled", "false", "a->c.emit.heartbeats.enabled", "false"},
			[]string{"b->a", "b->c", "c->a", "c->b"}},
		{"enabled pairs only", []string{"clusters", "a, b, c, d, e, f", "emit.heartbeats.enabled", "false",
			"a->b.enabled", "true", "a->c.enabled", "true", "a->d.enabled", "true", "a->e.enabled", "false", "a->f.enabled", "false"},
			[]string{"a->b", "a->c", "a->d"}},
		{"a pair's heartbeats without replication", []string{"clusters", "central, local_one, local_two, beats_emitter",
			"emit.heartbeats.enabled", "false", "central->local_one.enabled", "true", "central->local_two.enabled", "true",
			"beats_emitter->central.emit.heartbeats.enabled", "true"},
			[]string{"central->local_one", "central->local_two", "beats_emitter->central"}},
		{"Boolean.parseBoolean: TRUE is true, yes is not", []string{"clusters", "a, b", "emit.heartbeats.enabled", "no",
			"a->b.enabled", "TRUE", "b->a.enabled", "yes"}, []string{"a->b"}},
		{"a cluster listed twice counts once", []string{"clusters", "a, b, a,", "emit.heartbeats.enabled", "false",
			"a->b.enabled", "true"}, []string{"a->b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := flowNames(mustParse(t, tc.kv...).Flows()); !slices.Equal(got, tc.want) {
				t.Errorf("flows %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFlowsTo(t *testing.T) {
	c := mustParse(t, "clusters", "a, b, hub", "emit.heartbeats.enabled", "false", "a->hub.enabled", "true", "b->hub.enabled", "true")
	got, err := c.FlowsTo([]string{"hub"})
	if err != nil || !slices.Equal(flowNames(got), []string{"a->hub", "b->hub"}) {
		t.Errorf("FlowsTo(hub) = %v, %v", flowNames(got), err)
	}
	if _, err := c.FlowsTo([]string{"a"}); err == nil || err.Error() != "No source->target replication flows." {
		t.Errorf("FlowsTo(a): %v", err)
	}
	if _, err := c.FlowsTo([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `"nope" is not in clusters`) {
		t.Errorf("FlowsTo(nope): %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, `Missing required configuration "clusters" which has no default value.`},
		{map[string]string{"clusters": "a, b", "security.protocol": "abc"}, "Invalid value abc for configuration security.protocol"},
		{map[string]string{"clusters": "a, b", "dedicated.mode.enable.internal.rest": "maybe"}, "Expected value to be either true or false"},
		{map[string]string{"clusters": "a->b"}, `cluster alias "a->b" may not contain`},
		{map[string]string{"clusters": "a, b", "config.providers": "file"}, "config providers are not supported"},
	} {
		_, err := Parse(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%v) = %v, want an error with %q", tc.props, err, tc.want)
		}
	}
	// security.protocol is case-insensitive, as Kafka's validator.
	mustParse(t, "clusters", "a", "security.protocol", "sasl_ssl")
}

// TestClientProps follows MirrorMakerConfigTest.testClientConfigProperties.
func TestClientProps(t *testing.T) {
	c := mustParse(t, "clusters", "a, b",
		"replication.policy.separator", "__",
		"ssl.key.password", "secret",
		"security.protocol", "SSL",
		"a.security.protocol", "PLAINTEXT",
		"a.producer.security.protocol", "SSL",
		"a.bootstrap.servers", "127.0.0.1:9092, 127.0.0.2:9092",
		"b.bootstrap.servers", "127.0.0.3:9092",
		"metric.reporters", "FakeMetricsReporter",
		"a.xxx", "yyy", "xxx", "zzz")
	admin := c.ClientProps("a", "admin")
	diffMaps(t, "a admin", admin, map[string]string{
		"bootstrap.servers": "127.0.0.1:9092, 127.0.0.2:9092",
		"security.protocol": "PLAINTEXT", // a's own beats the top level's
		"ssl.key.password":  "secret",    // security keys come from the top level
	})
	if p := c.ClientProps("a", "producer")["security.protocol"]; p != "SSL" {
		t.Errorf("a producer security.protocol %q, want SSL (a.producer.security.protocol)", p)
	}
	if p := c.ClientProps("b", "consumer")["security.protocol"]; p != "SSL" {
		t.Errorf("b consumer security.protocol %q, want the top level's SSL", p)
	}
}

// TestWorkerConfigKeys follows MirrorMakerConfigTest.testWorkerConfigs.
func TestWorkerConfigKeys(t *testing.T) {
	c := mustParse(t, "clusters", "a, b",
		"replication.policy.separator", "__",
		"offset.storage.replication.factor", "123",
		"b.status.storage.replication.factor", "456",
		"b.producer.client.id", "client-one",
		"b.security.protocol", "PLAINTEXT",
		"b.producer.security.protocol", "SASL",
		"ssl.truststore.password", "secret1",
		"b.xxx", "yyy",
		"b.group.id", "custom-group",
		"topics", "not-for-workers")
	a := c.WorkerConfig(Flow{"b", "a"})
	for k, want := range map[string]string{
		"client.id": "b->a", "offset.storage.replication.factor": "123", "replication.policy.separator": "__",
		"group.id": "b-mm2",
	} {
		if a[k] != want {
			t.Errorf("b->a worker %s = %q, want %q", k, a[k], want)
		}
	}
	b := c.WorkerConfig(Flow{"a", "b"})
	for k, want := range map[string]string{
		"client.id": "a->b", "status.storage.replication.factor": "456", "producer.client.id": "client-one",
		"producer.security.protocol": "SASL", "consumer.security.protocol": "PLAINTEXT",
		"ssl.truststore.password": "secret1", "producer.ssl.truststore.password": "secret1",
		"xxx": "yyy", "group.id": "custom-group", // the target's keys override MM2's defaults
	} {
		if b[k] != want {
			t.Errorf("a->b worker %s = %q, want %q", k, b[k], want)
		}
	}
	if _, ok := b["topics"]; ok {
		t.Errorf("connector keys leaked into the worker config: %v", b)
	}
}

// TestConnectorConfigKeys follows MirrorMakerConfigTest's connector
// cases: which top-level keys reach the connectors, and the flow's own.
func TestConnectorConfigKeys(t *testing.T) {
	c := mustParse(t, "clusters", "a, b",
		"tasks.max", "100", "topics", "topic-1", "groups", "group-2",
		"replication.policy.separator", "__", "config.properties.exclude", "property-3",
		"metric.reporters", "FakeMetricsReporter", "topic.filter.class", "DefaultTopicFilter",
		"xxx", "yyy", "a.bootstrap.servers", "servers-one", "b.bootstrap.servers", "servers-two",
		"security.protocol", "SSL", "replication.factor", "4",
		"a->b.tasks.max", "123", "a->b.topics.exclude", "topic3",
		"key.converter", "org.apache.kafka.connect.json.JsonConverter")
	p := c.ConnectorConfig(Flow{"a", "b"}, SourceConnector)
	for k, want := range map[string]string{
		"tasks.max": "123", "topics": "topic-1", "groups": "group-2", "replication.policy.separator": "__",
		"config.properties.exclude": "property-3", "metric.reporters": "FakeMetricsReporter",
		"topic.filter.class": "DefaultTopicFilter", "security.protocol": "SSL", "replication.factor": "4",
		"source.cluster.bootstrap.servers": "servers-one", "target.cluster.bootstrap.servers": "servers-two",
		"topics.exclude": "topic3", "enabled": "false",
		// A top-level converter is a ConnectorConfig key: it reaches the
		// connectors (and the workers), as in MM2.
		"key.converter": "org.apache.kafka.connect.json.JsonConverter",
	} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	// "enabled" comes from a->b.enabled alone: a top-level enabled is a
	// connector key, but the flow's wins.
	c2 := mustParse(t, "clusters", "a, b", "enabled", "true", "a->b.enabled", "false")
	if e := c2.ConnectorConfig(Flow{"a", "b"}, SourceConnector)["enabled"]; e != "false" {
		t.Errorf("enabled %q with a->b.enabled = false", e)
	}
	if _, ok := p["xxx"]; ok {
		t.Errorf("unknown top-level key passed to the connector: %v", p)
	}
}
