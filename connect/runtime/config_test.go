package runtime

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Kafka's config/connect-standalone.properties.
var kafkaStandaloneSample = map[string]string{
	"bootstrap.servers":              "localhost:9092",
	"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
	"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
	"key.converter.schemas.enable":   "true",
	"value.converter.schemas.enable": "true",
	"offset.storage.file.filename":   "/tmp/connect.offsets",
	"offset.flush.interval.ms":       "10000",
	"plugin.path":                    "libs/connect-file-4.4.0.jar",
}

func TestParseWorkerConfigStandalone(t *testing.T) {
	w, err := ParseWorkerConfig(kafkaStandaloneSample, Standalone)
	if err != nil {
		t.Fatal(err)
	}
	if w.OffsetFlushInterval != 10*time.Second || w.OffsetFlushTimeout != 5*time.Second || w.TaskShutdownGracefulTimeout != 5*time.Second {
		t.Errorf("durations %v %v %v", w.OffsetFlushInterval, w.OffsetFlushTimeout, w.TaskShutdownGracefulTimeout)
	}
	if w.HeaderConverter != "org.apache.kafka.connect.storage.SimpleHeaderConverter" || w.ClientConfigOverridePolicy != "All" {
		t.Errorf("defaults: header converter %q, policy %q", w.HeaderConverter, w.ClientConfigOverridePolicy)
	}
	if !slices.Equal(w.Listeners, []string{"http://:8083"}) || w.OffsetStorageFileName != "/tmp/connect.offsets" {
		t.Errorf("listeners %v, file %q", w.Listeners, w.OffsetStorageFileName)
	}
	if got := w.ConverterProps("value.converter"); len(got) != 1 || got["schemas.enable"] != "true" {
		t.Errorf("converter props %v", got)
	}
	if !w.TopicCreationEnable || !w.TopicTrackingEnable {
		t.Error("topic creation and tracking default to on")
	}
}

func TestParseWorkerConfigDistributed(t *testing.T) {
	props := map[string]string{
		"bootstrap.servers": "a:9092,b:9092", "group.id": "connect-cluster",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.topic": "connect-offsets", "offset.storage.replication.factor": "1",
		"config.storage.topic": "connect-configs", "config.storage.replication.factor": "1",
		"status.storage.topic": "connect-status", "status.storage.replication.factor": "1",
		"scheduled.rebalance.max.delay.ms": "0", "listeners": "http://127.0.0.1:8083",
		"rest.advertised.host.name": "worker1", "connector.client.config.override.policy": "None",
	}
	w, err := ParseWorkerConfig(props, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	if w.GroupID != "connect-cluster" || w.OffsetStoragePartitions != 25 || w.StatusStoragePartitions != 5 ||
		w.OffsetStorageReplicationFactor != 1 || w.ScheduledRebalanceMaxDelay != 0 || w.HeartbeatInterval != 3*time.Second ||
		w.SessionTimeout != 10*time.Second || w.RebalanceTimeout != time.Minute || w.ConnectProtocol != "sessioned" {
		t.Errorf("parsed %+v", w)
	}
	if got := w.AdvertisedURL("127.0.0.1:8083"); got != "http://worker1:8083/" {
		t.Errorf("advertised URL %s", got)
	}
	if w.ClientConfigOverridePolicy != "None" {
		t.Errorf("policy %s", w.ClientConfigOverridePolicy)
	}

	// Every problem at once, with Kafka's messages.
	_, err = ParseWorkerConfig(map[string]string{"offset.flush.interval.ms": "soon"}, Distributed)
	var ce *connect.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v", err)
	}
	msgs := strings.Join(ce.Messages(), "\n")
	for _, want := range []string{`Missing required configuration "bootstrap.servers"`, `Missing required configuration "group.id"`,
		`Missing required configuration "config.storage.topic"`, "Invalid value soon for configuration offset.flush.interval.ms: Not a number of type LONG"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("missing %q in:\n%s", want, msgs)
		}
	}
	props["status.storage.topic"] = "connect-offsets"
	if _, err := ParseWorkerConfig(props, Distributed); err == nil || !strings.Contains(err.Error(), "must specify a unique topic") {
		t.Errorf("duplicate topics: %v", err)
	}
	props["status.storage.topic"] = "connect-status"
	props["listeners"] = "ftp://x:1"
	if _, err := ParseWorkerConfig(props, Distributed); err == nil || !strings.Contains(err.Error(), "listeners") {
		t.Errorf("bad listener: %v", err)
	}
}

func TestKafkaClientOpts(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	opts, err := KafkaClientOpts(ProducerClient, map[string]string{
		"bootstrap.servers": "PLAINTEXT://a:1, b:2", "acks": "1", "linger.ms": "20", "compression.type": "zstd",
		"batch.size": "65536", "client.id": "x", "max.request.size": "2000000", "key.serializer": "whatever",
	}, log)
	if err != nil || len(opts) < 6 {
		t.Fatalf("%d opts, %v", len(opts), err)
	}
	for props, want := range map[*map[string]string]string{
		{"acks": "2"}:                          "acks",
		{"compression.type": "brotli"}:         "compression.type",
		{"security.protocol": "SASL_SSL"}:      "sasl.jaas.config is required",
		{"linger.ms": "x"}:                     "linger.ms",
		{"partition.assignment.strategy": "x"}: "partition.assignment.strategy",
	} {
		kind := ProducerClient
		if _, ok := (*props)["partition.assignment.strategy"]; ok {
			kind = ConsumerClient
		}
		if _, err := KafkaClientOpts(kind, *props, log); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v", *props, err)
		}
	}
	if _, err := KafkaClientOpts(ConsumerClient, map[string]string{"max.poll.records": "10", "auto.offset.reset": "latest",
		"partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "isolation.level": "read_committed"}, log); err != nil {
		t.Error(err)
	}
}

func TestOverridePolicies(t *testing.T) {
	ov := map[string]string{"acks": "1", "sasl.mechanism": "PLAIN"}
	for policy, wantErrs := range map[string]int{"All": 0, "Principal": 1, "None": 2} {
		n := 0
		for _, v := range checkOverrides(policy, ov) {
			n += len(v.Errors)
			if len(v.Errors) > 0 && !strings.Contains(v.Errors[0], "policy does not allow") {
				t.Errorf("message %q", v.Errors[0])
			}
		}
		if n != wantErrs {
			t.Errorf("policy %s: %d errors, want %d", policy, n, wantErrs)
		}
	}
}

// TestJavaHashOrder checks the HashMap order against what Kafka printed
// for JsonConverter's keys (testdata/kafkaref/validate/bad_converter.json).
func TestJavaHashOrder(t *testing.T) {
	in := []string{"schemas.enable", "schema.content", "converter.type", "replace.null.with.default", "decimal.format", "schemas.cache.size"}
	want := []string{"decimal.format", "converter.type", "schemas.cache.size", "replace.null.with.default", "schemas.enable", "schema.content"}
	if got := javaHashOrder(in); !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestParseConnectorConfig(t *testing.T) {
	cc, err := ParseConnectorConfig(map[string]string{"name": "s", "connector.class": "GoldenSink", "topics": "a, b",
		"errors.retry.timeout": "-1", "errors.tolerance": "all", "transforms": "t", "transforms.t.type": "dev.fjord.golden.GoldenTransform",
		"transforms.t.field": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if cc.Type != SinkType || !slices.Equal(cc.Topics, []string{"a", "b"}) || cc.ErrorRetryTimeout != -1 || !cc.ToleranceAll ||
		len(cc.Transforms) != 1 || cc.Transforms[0].Props["field"] != "x" {
		t.Errorf("parsed %+v", cc)
	}
	if _, err := ParseConnectorConfig(map[string]string{"name": "s", "connector.class": "GoldenSink"}); err == nil ||
		!strings.Contains(err.Error(), "Must configure one of topics or topics.regex") {
		t.Errorf("no topics: %v", err)
	}
	if _, err := ParseConnectorConfig(map[string]string{"name": "s"}); err == nil || !strings.Contains(err.Error(), "contains no connector type") {
		t.Errorf("no class: %v", err)
	}
	tc, err := ParseConnectorConfig(map[string]string{"name": "s", "connector.class": "GoldenSource", "topic": "x",
		"topic.creation.groups": "compacted", "topic.creation.default.partitions": "3", "topic.creation.default.replication.factor": "-1",
		"topic.creation.compacted.include": "state.*", "topic.creation.compacted.cleanup.policy": "compact"})
	if err != nil {
		t.Fatal(err)
	}
	// A group without its own partitions/replication factor takes
	// default's (Kafka's SourceConnectorConfig.enrich).
	if g := tc.TopicCreation.For("state-x"); g.Name != "compacted" || g.Configs["cleanup.policy"] != "compact" || g.Partitions != 3 || g.ReplicationFactor != -1 {
		t.Errorf("group for state-x: %+v", g)
	}
	if g := tc.TopicCreation.For("other"); g.Name != "default" || g.Partitions != 3 {
		t.Errorf("group for other: %+v", g)
	}
	tc, err = ParseConnectorConfig(map[string]string{"name": "s", "connector.class": "GoldenSource", "topic": "x",
		"topic.creation.groups": "big,default", "topic.creation.default.partitions": "2", "topic.creation.default.replication.factor": "1",
		"topic.creation.big.include": "big-.*", "topic.creation.big.exclude": "big-small", "topic.creation.big.partitions": "12",
		"topic.creation.big.retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if g := tc.TopicCreation.For("big-1"); g.Name != "big" || g.Partitions != 12 || g.ReplicationFactor != 1 || g.Configs["retention.ms"] != "1000" {
		t.Errorf("group for big-1: %+v", g)
	}
	if g := tc.TopicCreation.For("big-small"); g.Name != "default" || g.Partitions != 2 || len(g.Configs) != 0 {
		t.Errorf("group for big-small (excluded): %+v", g)
	}
	if _, err := ParseConnectorConfig(map[string]string{"name": "s", "connector.class": "GoldenSource", "topic": "x",
		"topic.creation.default.partitions": "3"}); err == nil || !strings.Contains(err.Error(), "replication.factor") {
		t.Errorf("missing default replication factor: %v", err)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.25: "0.25", 1e7: "1.0E7", 1.5e-5: "1.5E-5", 123456.5: "123456.5"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}
