package transforms

import (
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// InsertField is Kafka's org.apache.kafka.connect.transforms.InsertField
// $Key/$Value: adds the record's topic, partition, offset (sink records),
// timestamp and/or a static string as fields. A field name ending in "!"
// is required, "?" (or no suffix) optional.
type InsertField struct {
	side
	topic, partition, offset, timestamp, static *insertionSpec
	staticValue                                 string
	replaceNull                                 bool
	cache                                       schemaCache
}

type insertionSpec struct {
	name     string
	optional bool
}

func parseInsertionSpec(cfg *connect.Config, key string) *insertionSpec {
	if cfg.IsNull(key) {
		return nil
	}
	s := cfg.String(key)
	if n, ok := strings.CutSuffix(s, "?"); ok {
		return &insertionSpec{n, true}
	}
	if n, ok := strings.CutSuffix(s, "!"); ok {
		return &insertionSpec{n, false}
	}
	return &insertionSpec{s, true}
}

const optionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

func insertFieldConfigDef() *connect.ConfigDef {
	str := func(name, doc string) connect.ConfigKey {
		return connect.ConfigKey{Name: name, Type: connect.TypeString, Default: nil, Importance: connect.Medium, Doc: doc}
	}
	return connect.NewConfigDef().
		Define(str("topic.field", "Field name for Kafka topic. "+optionalityDoc)).
		Define(str("partition.field", "Field name for Kafka partition. "+optionalityDoc)).
		Define(str("offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>"+optionalityDoc)).
		Define(str("timestamp.field", "Field name for record timestamp. "+optionalityDoc)).
		Define(str("static.field", "Field name for static data field. "+optionalityDoc)).
		Define(str("static.value", "Static field value, if field name configured.")).
		Define(replaceNullWithDefaultKey())
}

func (t *InsertField) Config() *connect.ConfigDef { return insertFieldConfigDef() }
func (t *InsertField) Close() error               { return nil }

func (t *InsertField) Configure(props map[string]string) error {
	cfg, err := parseConfig(insertFieldConfigDef(), props)
	if err != nil {
		return err
	}
	t.topic = parseInsertionSpec(cfg, "topic.field")
	t.partition = parseInsertionSpec(cfg, "partition.field")
	t.offset = parseInsertionSpec(cfg, "offset.field")
	t.timestamp = parseInsertionSpec(cfg, "timestamp.field")
	t.static = parseInsertionSpec(cfg, "static.field")
	t.staticValue = cfg.String("static.value")
	t.replaceNull = cfg.Bool("replace.null.with.default")
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.static == nil {
		return configErr("", "No field insertion configured")
	}
	if t.static != nil && cfg.IsNull("static.value") {
		return configErr("static.value", "Invalid value null for configuration static.value: No value specified for static field: "+javaInsertionSpec(t.static))
	}
	return nil
}

// javaInsertionSpec is InsertionSpec's default Object.toString, which
// Kafka's message prints; the hash cannot be reproduced, the class can.
func javaInsertionSpec(*insertionSpec) string {
	return "org.apache.kafka.connect.transforms.InsertField$InsertionSpec"
}

const insertPurpose = "field insertion"

func (t *InsertField) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, insertPurpose)
		if err != nil {
			return nil, err
		}
		updated := make(map[string]any, len(m)+5)
		for k, x := range m {
			updated[k] = x
		}
		if t.topic != nil {
			updated[t.topic.name] = r.Topic
		}
		if t.partition != nil && r.Partition >= 0 {
			updated[t.partition.name] = r.Partition
		}
		if t.offset != nil {
			if err := requireSinkRecord(r, insertPurpose); err != nil {
				return nil, err
			}
			updated[t.offset.name] = r.Offset
		}
		if t.timestamp != nil && r.Timestamp >= 0 {
			updated[t.timestamp.name] = r.Timestamp
		}
		if t.static != nil {
			updated[t.static.name] = t.staticValue
		}
		return t.with(r, nil, updated), nil
	}
	st, err := requireStruct(v, insertPurpose)
	if err != nil {
		return nil, err
	}
	updatedSchema, err := t.cache.getOrBuild(st.Schema(), func() (*connect.Schema, error) { return t.buildSchema(st.Schema()) })
	if err != nil {
		return nil, err
	}
	out := connect.NewStructValue(updatedSchema)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		if err := kput(out, f.Name, fieldValue(st, f, t.replaceNull)); err != nil {
			return nil, err
		}
	}
	if t.topic != nil {
		if err := kput(out, t.topic.name, r.Topic); err != nil {
			return nil, err
		}
	}
	if t.partition != nil && r.Partition >= 0 {
		if err := kput(out, t.partition.name, r.Partition); err != nil {
			return nil, err
		}
	}
	if t.offset != nil {
		if err := requireSinkRecord(r, insertPurpose); err != nil {
			return nil, err
		}
		if err := kput(out, t.offset.name, r.Offset); err != nil {
			return nil, err
		}
	}
	if t.timestamp != nil && r.Timestamp >= 0 {
		if err := kput(out, t.timestamp.name, time.UnixMilli(r.Timestamp).UTC()); err != nil {
			return nil, err
		}
	}
	if t.static != nil {
		if err := kput(out, t.static.name, t.staticValue); err != nil {
			return nil, err
		}
	}
	return t.with(r, updatedSchema, out), nil
}

var optionalTimestampSchema = connect.TimestampSchema().Optional().Build()
var timestampSchema = connect.TimestampSchema().Build()

func (t *InsertField) buildSchema(s *connect.Schema) (*connect.Schema, error) {
	b := copyBasics(s, connect.NewStruct())
	for _, f := range s.Fields {
		b.Field(f.Name, f.Schema)
	}
	pick := func(spec *insertionSpec, optional, required *connect.Schema) {
		if spec == nil {
			return
		}
		if spec.optional {
			b.Field(spec.name, optional)
		} else {
			b.Field(spec.name, required)
		}
	}
	pick(t.topic, connect.OptionalStringSchema, connect.StringSchema)
	pick(t.partition, connect.OptionalInt32Schema, connect.Int32Schema)
	pick(t.offset, connect.OptionalInt64Schema, connect.Int64Schema)
	pick(t.timestamp, optionalTimestampSchema, timestampSchema)
	pick(t.static, connect.OptionalStringSchema, connect.StringSchema)
	return b.BuildE()
}
