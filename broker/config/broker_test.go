package config

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustBroker(t *testing.T, props map[string]string) *Broker {
	t.Helper()
	b, err := NewBroker(props, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewBrokerKafkaDefaults(t *testing.T) {
	b := mustBroker(t, map[string]string{"node.id": "1"})
	want := map[string]any{
		"NodeID":                        int32(1),
		"NumPartitions":                 int32(1),
		"DefaultReplicationFactor":      int32(1),
		"AutoCreateTopicsEnable":        true,
		"DeleteTopicEnable":             true,
		"LogDirs":                       []string{"/tmp/kafka-logs"},
		"LogRetentionMs":                int64(7 * 24 * 3600 * 1000),
		"LogRetentionBytes":             int64(-1),
		"LogRetentionCheckIntervalMs":   int64(300000),
		"LogSegmentBytes":               int32(1 << 30),
		"LogRollMs":                     int64(7 * 24 * 3600 * 1000),
		"LogRollJitterMs":               int64(0),
		"LogCleanupPolicy":              []string{"delete"},
		"MessageMaxBytes":               int32(1048588),
		"LogFlushIntervalMessages":      int64(math.MaxInt64),
		"LogFlushIntervalMs":            int64(math.MaxInt64),
		"LogIndexIntervalBytes":         int32(4096),
		"LogIndexSizeMaxBytes":          int32(10 << 20),
		"LogCleanerEnable":              true,
		"LogCleanerThreads":             int32(1),
		"LogCleanerMinCleanableRatio":   0.5,
		"LogMessageTimestampType":       "CreateTime",
		"NumRecoveryThreadsPerDataDir":  int32(2),
		"OffsetsTopicNumPartitions":     int32(50),
		"OffsetsTopicReplicationFactor": int16(3),
		"OffsetsRetentionMinutes":       int32(10080),
		"GroupInitialRebalanceDelayMs":  int32(3000),
		"GroupMinSessionTimeoutMs":      int32(6000),
		"GroupMaxSessionTimeoutMs":      int32(1800000),
		"GroupMaxSize":                  int32(math.MaxInt32),
		"SocketRequestMaxBytes":         int32(100 << 20),
		"SocketSendBufferBytes":         int32(102400),
		"NumIoThreads":                  int32(8),
		"NumNetworkThreads":             int32(3),
		"MinInsyncReplicas":             int32(1),
		"CompressionType":               "producer",
		"ProducerIDExpirationMs":        int32(86400000),
		"TransactionalIDExpirationMs":   int32(604800000),
		"ReplicaLagTimeMaxMs":           int64(30000),
		"Listeners":                     []Listener{{Name: "PLAINTEXT", Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		"AdvertisedListeners":           []Listener{{Name: "PLAINTEXT", Port: 9092, SecurityProtocol: "PLAINTEXT"}},
	}
	v := reflect.ValueOf(*b)
	for field, w := range want {
		if got := v.FieldByName(field).Interface(); !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v (Kafka's default)", field, got, w)
		}
	}
}

func TestListeners(t *testing.T) {
	b := mustBroker(t, map[string]string{
		"node.id":                        "1",
		"listeners":                      "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093,internal://[::1]:9094",
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
	})
	want := []Listener{
		{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		{Name: "INTERNAL", Host: "::1", Port: 9094, SecurityProtocol: "SASL_PLAINTEXT"},
	}
	if !reflect.DeepEqual(b.AdvertisedListeners, want) {
		t.Errorf("advertised = %+v, want the non-controller listeners %+v", b.AdvertisedListeners, want)
	}
	if got := b.Listeners[2].Addr(); got != "[::1]:9094" {
		t.Errorf("Addr = %s", got)
	}
}

func TestNewBrokerErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []string
	}{
		{"no node id", map[string]string{}, []string{`Missing required configuration "node.id" which has no default value.`}},
		{"node.id and broker.id disagree", map[string]string{"node.id": "1", "broker.id": "2"}, []string{"node.id (1) and broker.id (2) differ"}},
		{"bad int", map[string]string{"node.id": "1", "num.partitions": "abc"}, []string{"Invalid value abc for configuration num.partitions: Not a number of type INT"}},
		{"every bad value reported", map[string]string{"node.id": "1", "num.partitions": "0", "log.cleanup.policy": "bogus", "auto.create.topics.enable": "yes"}, []string{
			"Invalid value 0 for configuration num.partitions: Value must be at least 1",
			"Invalid value bogus for configuration log.cleanup.policy: String must be one of: compact, delete",
			"Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false",
		}},
		{"bad listener", map[string]string{"node.id": "1", "listeners": "PLAINTEXT:/127.0.0.1:9092"}, []string{"Unable to parse PLAINTEXT:/127.0.0.1:9092 to a broker endpoint"}},
		{"listener without protocol", map[string]string{"node.id": "1", "listeners": "CLIENT://:9092"}, []string{"no security protocol defined for listener CLIENT"}},
		{"duplicate listener", map[string]string{"node.id": "1", "listeners": "PLAINTEXT://:9092,plaintext://:9093"}, []string{"each listener must have a different name"}},
		{"advertise 0.0.0.0", map[string]string{"node.id": "1", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, []string{"advertised.listeners cannot use the nonroutable meta-address 0.0.0.0"}},
		{"bad voters", map[string]string{"node.id": "1", "controller.quorum.voters": "1@localhost"}, []string{"Failed to parse host name from entry 1@localhost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBroker(tc.props, quiet())
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestBrokerIDSynonym(t *testing.T) {
	b := mustBroker(t, map[string]string{"broker.id": "3"})
	if b.NodeID != 3 {
		t.Fatalf("NodeID = %d, want broker.id's 3", b.NodeID)
	}
	es, err := b.DescribeBroker("3", DescribeOptions{Names: []string{"node.id"}, Synonyms: true, Version: 4})
	if err != nil || len(es) != 1 || str(es[0].Value) != `"3"` || es[0].Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("node.id described as %+v, %v; want static 3 as Kafka shows it", es, err)
	}
}

// TestUnknownKeysLogged checks what users see for keys that do nothing.
func TestUnknownKeysLogged(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, err := NewBroker(map[string]string{
		"node.id":             "1",
		"log.retention.hourz": "1",    // typo: Kafka does not know it either
		"num.io.threads":      "16",   // Kafka's, ignored by Fjord
		"retention.ms":        "1000", // a topic key in the broker file
		"listener.name.plaintext.ssl.keymanager.algorithm": "/x",
		"num.partitions": "3", // used: silent
	}, logger)
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"level=WARN msg=\"unknown broker config ignored (Apache Kafka does not define it either; a typo?)\" key=log.retention.hourz",
		"level=DEBUG msg=\"Apache Kafka broker config accepted; Fjord does not use it\" key=num.io.threads",
		"level=WARN msg=\"topic config in broker properties has no effect; use the broker-level name\" key=retention.ms broker_key=log.retention.ms",
		"level=DEBUG msg=\"per-listener Kafka config accepted; Fjord does not use it\" key=listener.name.plaintext.ssl.keymanager.algorithm",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "num.partitions") {
		t.Errorf("a used key was logged:\n%s", out)
	}
}

// TestPrecedence walks Kafka's precedence rules for the keys that have
// several spellings and layers.
func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name      string
		static    map[string]string
		dynamic   Dynamic
		overrides map[string]string
		key       string // topic key checked
		want      any
		source    kmsg.ConfigSource
	}{
		{name: "retention default", key: "retention.ms", want: int64(604800000), source: kmsg.ConfigSourceDefaultConfig},
		{name: "hours", static: map[string]string{"log.retention.hours": "1"}, key: "retention.ms", want: int64(3600000), source: kmsg.ConfigSourceDefaultConfig},
		{name: "minutes beat hours", static: map[string]string{"log.retention.hours": "1", "log.retention.minutes": "5"}, key: "retention.ms", want: int64(300000), source: kmsg.ConfigSourceDefaultConfig},
		{name: "ms beats minutes", static: map[string]string{"log.retention.ms": "42", "log.retention.minutes": "5", "log.retention.hours": "1"}, key: "retention.ms", want: int64(42), source: kmsg.ConfigSourceStaticBrokerConfig},
		{name: "negative hours mean unlimited", static: map[string]string{"log.retention.hours": "-1"}, key: "retention.ms", want: int64(-1), source: kmsg.ConfigSourceDefaultConfig},
		{name: "dynamic default beats static ms", static: map[string]string{"log.retention.ms": "500"}, dynamic: Dynamic{ClusterDefault: map[string]string{"log.retention.ms": "1000"}}, key: "retention.ms", want: int64(1000), source: kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{name: "dynamic ms beats static minutes", static: map[string]string{"log.retention.minutes": "5"}, dynamic: Dynamic{ClusterDefault: map[string]string{"log.retention.ms": "1000"}}, key: "retention.ms", want: int64(1000), source: kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{name: "per-broker beats cluster default", dynamic: Dynamic{ClusterDefault: map[string]string{"log.retention.ms": "1000"}, Broker: map[string]string{"log.retention.ms": "2000"}}, key: "retention.ms", want: int64(2000), source: kmsg.ConfigSourceDynamicBrokerConfig},
		{name: "topic beats all", static: map[string]string{"log.retention.ms": "1"}, dynamic: Dynamic{Broker: map[string]string{"log.retention.ms": "2000"}}, overrides: map[string]string{"retention.ms": "3000"}, key: "retention.ms", want: int64(3000), source: kmsg.ConfigSourceDynamicTopicConfig},
		{name: "roll hours", static: map[string]string{"log.roll.hours": "2"}, key: "segment.ms", want: int64(7200000), source: kmsg.ConfigSourceDefaultConfig},
		{name: "roll ms beats hours", static: map[string]string{"log.roll.hours": "2", "log.roll.ms": "5"}, key: "segment.ms", want: int64(5), source: kmsg.ConfigSourceStaticBrokerConfig},
		{name: "flush falls back to scheduler", static: map[string]string{"log.flush.scheduler.interval.ms": "1000"}, key: "flush.ms", want: int64(1000), source: kmsg.ConfigSourceDefaultConfig},
		{name: "flush interval", static: map[string]string{"log.flush.scheduler.interval.ms": "1000", "log.flush.interval.ms": "10"}, key: "flush.ms", want: int64(10), source: kmsg.ConfigSourceStaticBrokerConfig},
		{name: "message.max.bytes", static: map[string]string{"message.max.bytes": "2000000"}, key: "max.message.bytes", want: int32(2000000), source: kmsg.ConfigSourceStaticBrokerConfig},
		{name: "cleanup policy", dynamic: Dynamic{ClusterDefault: map[string]string{"log.cleanup.policy": "compact"}}, key: "cleanup.policy", want: []string{"compact"}, source: kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{name: "no broker synonym", key: "remote.storage.enable", want: false, source: kmsg.ConfigSourceDefaultConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			static := map[string]string{"node.id": "1"}
			for k, v := range tc.static {
				static[k] = v
			}
			b := mustBroker(t, static).WithDynamic(tc.dynamic)
			vals, err := topicValues(tc.overrides, b.values)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(vals[tc.key], tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.key, vals[tc.key], tc.want)
			}
			es := b.DescribeTopic(tc.overrides, DescribeOptions{Names: []string{tc.key}, Version: 4})
			if len(es) != 1 || es[0].Source != tc.source {
				t.Errorf("described as %+v, want source %s", es, tc.source)
			}
		})
	}
}

func TestBrokerTypedValuesFollowDynamic(t *testing.T) {
	b := mustBroker(t, map[string]string{"node.id": "1", "log.retention.hours": "1", "log.cleaner.threads": "1"})
	d := b.WithDynamic(Dynamic{
		ClusterDefault: map[string]string{"log.cleaner.threads": "3", "log.retention.ms": "5000"},
		Broker:         map[string]string{"log.cleaner.threads": "4", "num.partitions": "9", "message.max.bytes": "bogus"},
	})
	if d.LogCleanerThreads != 4 || d.LogRetentionMs != 5000 {
		t.Errorf("threads %d retention %d; want per-broker 4 and dynamic 5000", d.LogCleanerThreads, d.LogRetentionMs)
	}
	if d.NumPartitions != 1 {
		t.Errorf("num.partitions is read-only; a stored dynamic value must not apply, got %d", d.NumPartitions)
	}
	if d.MessageMaxBytes != 1048588 {
		t.Errorf("an invalid dynamic value must be skipped, got %d", d.MessageMaxBytes)
	}
	if b.LogCleanerThreads != 1 {
		t.Errorf("WithDynamic changed the original")
	}
}

func TestTopic(t *testing.T) {
	b := mustBroker(t, map[string]string{"node.id": "1", "log.segment.bytes": "2097152"})
	topic, err := b.Topic(map[string]string{
		"cleanup.policy":         "compact, delete",
		"message.timestamp.type": "LogAppendTime",
		"compression.type":       "zstd",
		"retention.ms":           "-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !topic.Compact || !topic.Delete || !topic.LogAppendTime || topic.CompressionType != "zstd" || topic.RetentionMs != -1 || topic.SegmentBytes != 2097152 {
		t.Errorf("unexpected topic config %+v", topic)
	}
	// Stored garbage falls back to the broker default, and says so.
	topic, err = b.Topic(map[string]string{"segment.bytes": "tiny", "nope": "1"})
	if err == nil || !strings.Contains(err.Error(), "segment.bytes") || !strings.Contains(err.Error(), `unknown topic config "nope"`) {
		t.Errorf("err = %v", err)
	}
	if topic.SegmentBytes != 2097152 {
		t.Errorf("segment.bytes = %d, want the broker's 2097152", topic.SegmentBytes)
	}
	same, _ := b.Topic(map[string]string{"segment.bytes": "tiny"})
	if !topic.Equal(same) {
		t.Error("Equal: same settings differ")
	}
}

func TestValidateTopicConfigsReportsAll(t *testing.T) {
	err := ValidateTopicConfigs(map[string]string{"nope": "x", "retention.ms": "abc", "segment.bytes": "10", "max.compaction.lag.ms": "5", "min.compaction.lag.ms": "10"})
	e, ok := err.(*Error)
	if !ok || e.Code != 40 {
		t.Fatalf("err = %v, want INVALID_CONFIG", err)
	}
	want := []string{
		"Unknown topic config name: nope",
		"Invalid value 10 for configuration segment.bytes: Value must be at least 1048576",
		"Invalid value abc for configuration retention.ms: Not a number of type LONG",
		"conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
	}
	if !reflect.DeepEqual(e.Problems, want) {
		t.Errorf("problems\n got %q\nwant %q", e.Problems, want)
	}
	if e.Message != strings.Join(want, "; ") {
		t.Errorf("message %q", e.Message)
	}
	if err := ValidateTopicConfigs(map[string]string{"remote.storage.enable": "true"}); err == nil || !strings.Contains(err.Error(), "Tiered Storage functionality is disabled") {
		t.Errorf("remote.storage.enable=true: %v", err)
	}
	if err := ValidateTopicConfigs(map[string]string{"cleanup.policy": "compact", "retention.ms": "1000", "max.message.bytes": "10"}); err != nil {
		t.Errorf("valid configs rejected: %v", err)
	}
	// The broker's settings take part: a topic max lag below the broker's min lag conflicts.
	b := mustBroker(t, map[string]string{"node.id": "1", "log.cleaner.min.compaction.lag.ms": "100"})
	if err := b.ValidateTopicConfigs(map[string]string{"max.compaction.lag.ms": "50"}); err == nil {
		t.Error("conflict with the broker's min.compaction.lag.ms not found")
	}
}

func TestValidateBrokerConfigs(t *testing.T) {
	for _, tc := range []struct {
		resource string
		configs  map[string]string
		want     string // "" = valid
	}{
		{"", map[string]string{"log.retention.ms": "1000", "log.cleaner.threads": "2"}, ""},
		{"1", map[string]string{"listeners": "PLAINTEXT://:9092"}, ""},
		{"", map[string]string{"listeners": "PLAINTEXT://:9092"}, "Cannot update these configs at default cluster level, broker id must be specified: [listeners]"},
		{"1", map[string]string{"log.dirs": "/x", "num.partitions": "2"}, "Cannot update these configs dynamically: [log.dirs, num.partitions]"},
		{"1", map[string]string{"ssl.keystore.location": "/x"}, "These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location]"},
		{"1", map[string]string{"log.retention.ms": "abc"}, "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"},
		{"", map[string]string{"made.up.key": "1"}, ""},
	} {
		err := ValidateBrokerConfigs(tc.resource, tc.configs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q %v: %v", tc.resource, tc.configs, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || err.(*Error).Code != 42):
			t.Errorf("%q %v: got %v, want INVALID_REQUEST %q", tc.resource, tc.configs, err, tc.want)
		}
	}
}

func TestApplyIncrementalAlter(t *testing.T) {
	op := func(name string, o kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: o, Value: v}
	}
	s := kmsg.StringPtr
	got, err := ApplyIncrementalAlter(kmsg.ConfigResourceTypeTopic, map[string]string{"retention.ms": "1", "segment.ms": "5"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, s("compact")), // from the default "delete"
		op("retention.ms", kmsg.IncrementalAlterConfigOpDelete, nil),
		op("segment.bytes", kmsg.IncrementalAlterConfigOpSet, s("1048576")),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cleanup.policy": "delete,compact", "segment.ms": "5", "segment.bytes": "1048576"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got, err = ApplyIncrementalAlter(kmsg.ConfigResourceTypeTopic, got, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpSubtract, s("delete")),
	})
	if err != nil || got["cleanup.policy"] != "compact" {
		t.Errorf("subtract: %v %v", got, err)
	}
	_, err = ApplyIncrementalAlter(kmsg.ConfigResourceTypeTopic, nil, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op("retention.ms", kmsg.IncrementalAlterConfigOpAppend, s("1"))})
	if err == nil || err.Error() != "Can't APPEND to key retention.ms because its type is not LIST." || err.(*Error).Code != 40 {
		t.Errorf("append to LONG: %v", err)
	}
	_, err = ApplyIncrementalAlter(kmsg.ConfigResourceTypeTopic, nil, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op("retention.ms", kmsg.IncrementalAlterConfigOpSet, s("1")), op("retention.ms", kmsg.IncrementalAlterConfigOpDelete, nil)})
	if err == nil || err.(*Error).Code != 42 {
		t.Errorf("duplicate keys: %v", err)
	}
}

func TestDescribeVersionShapes(t *testing.T) {
	b := mustBroker(t, map[string]string{"node.id": "1"})
	overrides := map[string]string{"retention.ms": "1000"}
	v0 := b.DescribeTopic(overrides, DescribeOptions{Synonyms: true, Documentation: true, Version: 0})
	for _, e := range v0 {
		if e.ConfigSynonyms != nil || e.Documentation != nil || e.ConfigType != 0 {
			t.Fatalf("v0 entry has v1+/v3+ fields: %+v", e)
		}
		if e.IsDefault != (e.Name != "retention.ms") {
			t.Errorf("v0 %s is_default = %v", e.Name, e.IsDefault)
		}
	}
	v4 := b.DescribeTopic(overrides, DescribeOptions{Names: []string{"retention.ms", "nope"}, Version: 4})
	if len(v4) != 1 || v4[0].ConfigSynonyms != nil || v4[0].Documentation != nil || v4[0].ConfigType != kmsg.ConfigTypeLong {
		t.Errorf("v4 without synonyms/docs: %+v", v4)
	}
}

func TestFjordClusterID(t *testing.T) {
	b := mustBroker(t, map[string]string{"node.id": "0", "cluster.id": " abc "})
	if b.ClusterID != "abc" {
		t.Errorf("ClusterID = %q", b.ClusterID)
	}
	es, _ := b.DescribeBroker("0", DescribeOptions{Names: []string{"cluster.id"}, Version: 4})
	if len(es) != 1 || es[0].IsSensitive || !es[0].ReadOnly || es[0].ConfigType != kmsg.ConfigTypeString {
		t.Errorf("cluster.id described as %+v", es)
	}
}
