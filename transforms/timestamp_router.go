package transforms

import (
	"fmt"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// TimestampRouter is Kafka's
// org.apache.kafka.connect.transforms.TimestampRouter: the topic becomes
// "topic.format" with ${topic} and ${timestamp} (the record timestamp in
// "timestamp.format", a SimpleDateFormat pattern, UTC) substituted.
type TimestampRouter struct {
	topicFormat string
	format      *javaDateFormat
}

func timestampRouterConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic.format", Type: connect.TypeString, Default: "${topic}-${timestamp}", Importance: connect.High,
			Doc: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.TypeString, Default: "yyyyMMdd", Importance: connect.High,
			Doc: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}

func (t *TimestampRouter) Config() *connect.ConfigDef { return timestampRouterConfigDef() }
func (t *TimestampRouter) Close() error               { return nil }

func (t *TimestampRouter) Configure(props map[string]string) error {
	cfg, err := parseConfig(timestampRouterConfigDef(), props)
	if err != nil {
		return err
	}
	t.topicFormat = cfg.String("topic.format")
	// Kafka compiles the pattern lazily, on the first record; an invalid
	// one is reported here instead, where the user can fix it.
	if t.format, err = compileJavaDateFormat(cfg.String("timestamp.format")); err != nil {
		return invalidValueErr("timestamp.format", cfg.String("timestamp.format"), err.Error())
	}
	return nil
}

func (t *TimestampRouter) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	if r.Timestamp < 0 {
		return nil, dataErr("Timestamp missing on record: %s", recordString(r))
	}
	ts := t.format.format(time.UnixMilli(r.Timestamp))
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	topic = strings.ReplaceAll(topic, "${timestamp}", ts)
	c := r.Clone()
	c.Topic = topic
	return c, nil
}

// recordString renders a record as Kafka's SinkRecord/SourceRecord
// toString does, for error messages.
func recordString(r *connect.Record) string {
	var b strings.Builder
	if isSinkRecord(r) {
		fmt.Fprintf(&b, "SinkRecord{kafkaOffset=%d, timestampType=%s, originalTopic=%s, originalKafkaPartition=%s, originalKafkaOffset=%d} ",
			r.Offset, r.TimestampType, r.OriginalTopic, javaPartition(r.OriginalPartition), r.OriginalOffset)
	} else {
		fmt.Fprintf(&b, "SourceRecord{sourcePartition=%s, sourceOffset=%s} ", javaString(r.SourcePartition), javaString(r.SourceOffsetMap()))
	}
	ts := "null"
	if r.Timestamp >= 0 {
		ts = fmt.Sprint(r.Timestamp)
	}
	fmt.Fprintf(&b, "ConnectRecord{topic='%s', kafkaPartition=%s, key=%s, keySchema=%s, value=%s, valueSchema=%s, timestamp=%s, headers=ConnectHeaders(headers=",
		r.Topic, javaPartition(r.Partition), javaString(r.Key), r.KeySchema, javaString(r.Value), r.ValueSchema, ts)
	if len(r.Headers) > 0 {
		parts := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			parts[i] = fmt.Sprintf("ConnectHeader(key=%s, value=%s, schema=%s)", h.Key, javaString(h.Value), h.Schema)
		}
		b.WriteString("[" + strings.Join(parts, ", ") + "]")
	}
	b.WriteString(")}")
	return b.String()
}

func javaPartition(p int32) string {
	if p < 0 {
		return "null"
	}
	return fmt.Sprint(p)
}
