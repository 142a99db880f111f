package transforms

import (
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// TimestampConverter is Kafka's
// org.apache.kafka.connect.transforms.TimestampConverter$Key/$Value:
// converts a field (or the whole key/value) between a formatted string
// (SimpleDateFormat "format"), a Unix epoch number (INT64 in
// "unix.precision"), and Connect's Date, Time and Timestamp types.
type TimestampConverter struct {
	side
	field       string
	target      string
	format      *javaDateFormat
	precision   string
	replaceNull bool
	cache       schemaCache
}

const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

func timestampConverterConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: "", Importance: connect.High,
			Doc: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
		Define(connect.ConfigKey{Name: "target.type", Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.OneOf(tsString, tsUnix, tsDate, tsTime, tsTimestamp), Importance: connect.High,
			Doc: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"}).
		Define(connect.ConfigKey{Name: "format", Type: connect.TypeString, Default: "", Importance: connect.Medium,
			Doc: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."}).
		Define(connect.ConfigKey{Name: "unix.precision", Type: connect.TypeString, Default: "milliseconds",
			Validator: connect.OneOf("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance: connect.Low,
			Doc: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."}).
		Define(replaceNullWithDefaultKey())
}

func (t *TimestampConverter) Config() *connect.ConfigDef { return timestampConverterConfigDef() }
func (t *TimestampConverter) Close() error               { return nil }

func (t *TimestampConverter) Configure(props map[string]string) error {
	cfg, err := parseConfig(timestampConverterConfigDef(), props)
	if err != nil {
		return err
	}
	t.field = cfg.String("field")
	t.target = cfg.String("target.type")
	t.precision = cfg.String("unix.precision")
	t.replaceNull = cfg.Bool("replace.null.with.default")
	pattern := cfg.String("format")
	if t.target == tsString && strings.TrimSpace(pattern) == "" {
		return configErr("format", "TimestampConverter requires format option to be specified when using string timestamps")
	}
	t.format = nil
	if strings.TrimSpace(pattern) != "" {
		if t.format, err = compileJavaDateFormat(pattern); err != nil {
			// Kafka's ConfigException(message, cause) is its (name, value)
			// constructor, hence the odd order.
			return configErr("format", "Invalid value java.lang.IllegalArgumentException: "+err.Error()+" for configuration TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "+pattern)
		}
	}
	return nil
}

var (
	optionalDateSchema = connect.DateSchema().Optional().Build()
	dateSchema         = connect.DateSchema().Build()
	optionalTimeSchema = connect.TimeSchema().Optional().Build()
	timeSchema         = connect.TimeSchema().Build()
)

func (t *TimestampConverter) typeSchema(optional bool) *connect.Schema {
	pick := func(o, r *connect.Schema) *connect.Schema {
		if optional {
			return o
		}
		return r
	}
	switch t.target {
	case tsString:
		return pick(connect.OptionalStringSchema, connect.StringSchema)
	case tsUnix:
		return pick(connect.OptionalInt64Schema, connect.Int64Schema)
	case tsDate:
		return pick(optionalDateSchema, dateSchema)
	case tsTime:
		return pick(optionalTimeSchema, timeSchema)
	}
	return pick(optionalTimestampSchema, timestampSchema)
}

func (t *TimestampConverter) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s, v := t.schema(r), t.value(r)
	if s == nil {
		if v != nil && t.field != "" {
			m, err := requireMap(v, "converting timestamp formats")
			if err != nil {
				return nil, err
			}
			updated := make(map[string]any, len(m))
			for k, x := range m {
				updated[k] = x
			}
			if updated[t.field], err = t.convert(m[t.field], ""); err != nil {
				return nil, err
			}
			return t.with(r, nil, updated), nil
		}
		out, err := t.convert(v, "")
		if err != nil {
			return nil, err
		}
		return t.with(r, nil, out), nil
	}
	if t.field == "" {
		from, err := timestampTypeOf(s)
		if err != nil {
			return nil, err
		}
		out, err := t.convert(v, from)
		if err != nil {
			return nil, err
		}
		return t.with(r, t.typeSchema(s.Optional), out), nil
	}
	st, err := requireStructOrNull(v, "converting timestamp formats")
	if err != nil {
		return nil, err
	}
	if s.Type != connect.StructType {
		return nil, errNotStruct
	}
	updatedSchema, err := t.cache.getOrBuild(s, func() (*connect.Schema, error) {
		b := copyBasics(s, connect.NewStruct())
		for _, f := range s.Fields {
			if f.Name == t.field {
				b.Field(f.Name, t.typeSchema(f.Schema.Optional))
			} else {
				b.Field(f.Name, f.Schema)
			}
		}
		if s.Optional {
			b.Optional()
		}
		if def, ok := s.Default.(*connect.Struct); ok && def != nil {
			// The default is converted against the schema being built,
			// which has no default yet.
			noDefault, err := t.structSchemaWithoutDefault(s)
			if err != nil {
				return nil, err
			}
			d, err := t.convertStruct(def, noDefault)
			if err != nil {
				return nil, err
			}
			b.Default(d)
		}
		return b.BuildE()
	})
	if err != nil {
		return nil, err
	}
	out, err := t.convertStruct(st, updatedSchema)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return t.with(r, updatedSchema, nil), nil
	}
	return t.with(r, updatedSchema, out), nil
}

func (t *TimestampConverter) structSchemaWithoutDefault(s *connect.Schema) (*connect.Schema, error) {
	b := copyBasics(s, connect.NewStruct())
	for _, f := range s.Fields {
		if f.Name == t.field {
			b.Field(f.Name, t.typeSchema(f.Schema.Optional))
		} else {
			b.Field(f.Name, f.Schema)
		}
	}
	if s.Optional {
		b.Optional()
	}
	return b.BuildE()
}

func (t *TimestampConverter) convertStruct(st *connect.Struct, updated *connect.Schema) (*connect.Struct, error) {
	if st == nil {
		return nil, nil
	}
	out := connect.NewStructValue(updated)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		fv := fieldValue(st, f, t.replaceNull)
		if f.Name == t.field {
			from, err := timestampTypeOf(f.Schema)
			if err != nil {
				return nil, err
			}
			if fv, err = t.convert(fv, from); err != nil {
				return nil, err
			}
		}
		if err := kput(out, f.Name, fv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func timestampTypeOf(s *connect.Schema) (string, error) {
	switch {
	case s.Name == connect.TimestampName:
		return tsTimestamp, nil
	case s.Name == connect.DateName:
		return tsDate, nil
	case s.Name == connect.TimeName:
		return tsTime, nil
	case s.Type == connect.String:
		return tsString, nil
	case s.Type == connect.Int64:
		return tsUnix, nil
	}
	return "", &connect.DataError{Msg: "Schema " + s.String() + " does not correspond to a known timestamp type format"}
}

// convert turns v (of timestamp type from, or inferred from its Go type
// when from is "") into the target type.
func (t *TimestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case time.Time:
			from = tsTimestamp
		case int64:
			from = tsUnix
		case string:
			from = tsString
		default:
			return nil, dataErr("TimestampConverter does not support %s objects as timestamps", javaClass(v))
		}
	}
	var raw time.Time
	switch from {
	case tsString:
		s, ok := v.(string)
		if !ok {
			return nil, dataErr("Expected string timestamp to be a String, but found %s", javaClass(v))
		}
		if t.format == nil {
			// Kafka fails with this NullPointerException.
			return nil, dataErr(`Cannot invoke "java.text.SimpleDateFormat.parse(String)" because "config.format" is null`)
		}
		p, err := t.format.parse(s)
		if err != nil {
			return nil, dataErr("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.pattern)
		}
		raw = p
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return nil, dataErr("Expected Unix timestamp to be a Long, but found %s", javaClass(v))
		}
		switch t.precision {
		case "seconds":
			n *= 1000
		case "microseconds":
			n /= 1000
		case "nanoseconds":
			n /= 1000000
		}
		raw = time.UnixMilli(n).UTC()
	default:
		tm, ok := v.(time.Time)
		if !ok {
			return nil, dataErr("Expected %s to be a java.util.Date, but found %s", from, javaClass(v))
		}
		raw = tm.UTC()
	}
	switch t.target {
	case tsString:
		return t.format.format(raw), nil
	case tsUnix:
		ms := raw.UnixMilli()
		switch t.precision {
		case "seconds":
			return ms / 1000, nil
		case "microseconds":
			return ms * 1000, nil
		case "nanoseconds":
			return ms * 1000000, nil
		}
		return ms, nil
	case tsDate:
		return time.Date(raw.Year(), raw.Month(), raw.Day(), 0, 0, 0, 0, time.UTC), nil
	case tsTime:
		return time.UnixMilli(int64(raw.Hour())*3600000 + int64(raw.Minute())*60000 + int64(raw.Second())*1000 + int64(raw.Nanosecond()/1e6)).UTC(), nil
	}
	return raw.Truncate(time.Millisecond), nil
}
