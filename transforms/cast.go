package transforms

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Cast is Kafka's org.apache.kafka.connect.transforms.Cast$Key/$Value:
// casts fields of a Struct or map (spec "f1:int32,f2:string") or the whole
// key/value (spec "int64") to another primitive type.
type Cast struct {
	side
	casts       map[string]connect.Type
	wholeValue  connect.Type // 0 unless the spec casts the whole value
	replaceNull bool
	cache       schemaCache
}

func castConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{
			Name: "spec", Type: connect.TypeList, Default: connect.NoDefault, Importance: connect.High,
			Validator: func(name string, v any) error {
				items, _ := v.([]string)
				if len(items) == 0 {
					return &connect.VerbatimError{Msg: "Must specify at least one field to cast."}
				}
				if _, _, err := parseCastSpec(items); err != nil {
					return &connect.VerbatimError{Msg: err.Error()}
				}
				return nil
			},
			Doc: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
		}).
		Define(replaceNullWithDefaultKey())
}

func (c *Cast) Config() *connect.ConfigDef { return castConfigDef() }
func (c *Cast) Close() error               { return nil }

func (c *Cast) Configure(props map[string]string) error {
	cfg, err := parseConfig(castConfigDef(), props)
	if err != nil {
		return err
	}
	c.casts, c.wholeValue, err = parseCastSpec(cfg.List("spec"))
	if err != nil {
		return configErr("spec", err.Error())
	}
	c.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

var castOutputTypes = []connect.Type{connect.Int8, connect.Int16, connect.Int32, connect.Int64, connect.Float32, connect.Float64, connect.Boolean, connect.String}

const castOutputList = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"
const castInputList = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"

type castSpecError struct{ msg string }

func (e *castSpecError) Error() string { return e.msg }

func parseCastSpec(mappings []string) (map[string]connect.Type, connect.Type, error) {
	m := map[string]connect.Type{}
	var whole connect.Type
	parseType := func(s string) (connect.Type, error) {
		t, ok := connect.ParseType(strings.TrimSpace(s))
		if !ok || strings.TrimSpace(s) == "" {
			// Kafka passes its message and the enum's exception to the
			// (name, value) constructor of ConfigException, which prints
			// them this way round.
			return 0, &castSpecError{"Invalid value java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type." +
				strings.ToUpper(strings.TrimSpace(s)) + " for configuration Invalid type found in casting spec: " + strings.TrimSpace(s)}
		}
		for _, o := range castOutputTypes {
			if o == t {
				return t, nil
			}
		}
		return 0, &castSpecError{"Cast transformation does not support casting to " + t.String() + "; supported types are " + castOutputList}
	}
	for _, mapping := range mappings {
		parts := javaSplit(mapping, ":")
		switch {
		case len(parts) > 2:
			return nil, 0, &castSpecError{"Invalid value " + javaString(mappings) + " for configuration renames: Invalid rename mapping: " + mapping}
		case len(parts) == 1:
			t, err := parseType(parts[0])
			if err != nil {
				return nil, 0, err
			}
			whole = t
		default:
			t, err := parseType(parts[1])
			if err != nil {
				return nil, 0, err
			}
			m[strings.TrimSpace(parts[0])] = t
		}
	}
	if whole != 0 && len(mappings) > 1 {
		return nil, 0, &castSpecError{"Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"}
	}
	return m, whole, nil
}

// javaSplit is Java's String.split with a literal separator: trailing
// empty strings are removed, and an empty input gives one empty string.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" && s != "" {
		return nil
	}
	return parts
}

func (c *Cast) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	v := c.value(r)
	if v == nil {
		return r, nil
	}
	s := c.schema(r)
	if s == nil {
		if c.wholeValue != 0 {
			out, err := castValue(nil, v, c.wholeValue)
			if err != nil {
				return nil, err
			}
			return c.with(r, nil, out), nil
		}
		m, err := requireMap(v, "cast types")
		if err != nil {
			return nil, err
		}
		updated := make(map[string]any, len(m)+len(c.casts))
		for k, x := range m {
			updated[k] = x
		}
		for field, t := range c.casts {
			out, err := castValue(nil, m[field], t)
			if err != nil {
				return nil, err
			}
			updated[field] = out
		}
		return c.with(r, nil, updated), nil
	}
	updatedSchema, err := c.cache.getOrBuild(s, func() (*connect.Schema, error) { return c.buildSchema(s) })
	if err != nil {
		return nil, err
	}
	if c.wholeValue != 0 {
		out, err := castValue(s, v, c.wholeValue)
		if err != nil {
			return nil, err
		}
		return c.with(r, updatedSchema, out), nil
	}
	st, err := requireStruct(v, "cast types")
	if err != nil {
		return nil, err
	}
	updated := connect.NewStructValue(updatedSchema)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		orig := fieldValue(st, f, c.replaceNull)
		nv := orig
		if t, ok := c.casts[f.Name]; ok {
			if nv, err = castValue(f.Schema, orig, t); err != nil {
				return nil, err
			}
		}
		if err := kput(updated, f.Name, nv); err != nil {
			return nil, err
		}
	}
	return c.with(r, updatedSchema, updated), nil
}

func (c *Cast) buildSchema(s *connect.Schema) (*connect.Schema, error) {
	var b *connect.SchemaBuilder
	if c.wholeValue != 0 {
		b = copyBasics(s, connect.NewSchema(c.wholeValue))
	} else {
		if s.Type != connect.StructType {
			return nil, errNotStruct
		}
		b = copyBasics(s, connect.NewStruct())
		for _, f := range s.Fields {
			t, ok := c.casts[f.Name]
			if !ok {
				b.Field(f.Name, f.Schema)
				continue
			}
			fb := connect.NewSchema(t)
			if f.Schema.Optional {
				fb.Optional()
			}
			if f.Schema.Default != nil {
				d, err := castValue(f.Schema, f.Schema.Default, t)
				if err != nil {
					return nil, err
				}
				fb.Default(d)
			}
			fs, err := fb.BuildE()
			if err != nil {
				return nil, err
			}
			b.Field(f.Name, fs)
		}
	}
	if s.Optional {
		b.Optional()
	}
	if s.Default != nil {
		target := c.wholeValue
		if target == 0 {
			target = connect.StructType
		}
		d, err := castValue(s, s.Default, target)
		if err != nil {
			return nil, err
		}
		b.Default(d)
	}
	return b.BuildE()
}

// castValue is Kafka's Cast.castValueToType.
func castValue(s *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	var inferred connect.Type
	if s == nil {
		inferred = inferType(v)
		if inferred == 0 {
			return nil, dataErr("Cast transformation was passed a value of type %s which is not supported by Connect's data API", javaClass(v))
		}
	} else {
		inferred = s.Type
	}
	if !inferred.IsPrimitive() {
		return nil, dataErr("Cast transformation does not support casting from %s; supported types are %s", inferred, castInputList)
	}
	if s != nil && s.Name != "" && target != connect.String {
		if t, ok := v.(time.Time); ok {
			switch s.Name {
			case connect.DateName:
				days, err := connect.DateToDays(t)
				if err != nil {
					return nil, err
				}
				v = days
			case connect.TimeName:
				ms, err := connect.TimeToMillis(t)
				if err != nil {
					return nil, err
				}
				v = ms
			case connect.TimestampName:
				v = t.UnixMilli()
			}
		}
	}
	outOfRange := func() error {
		return dataErr("Value (%s) was out of range for requested data type", javaString(v))
	}
	switch target {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		var n int64
		switch x := v.(type) {
		case string:
			bits := map[connect.Type]int{connect.Int8: 8, connect.Int16: 16, connect.Int32: 32, connect.Int64: 64}[target]
			p, err := strconv.ParseInt(javaIntLiteral(x), 10, bits)
			if err != nil {
				return nil, outOfRange()
			}
			n = p
		case bool:
			if x {
				n = 1
			}
		case float32:
			n = javaNarrowFloat(float64(x), target)
		case float64:
			n = javaNarrowFloat(x, target)
		default:
			var ok bool
			if n, ok = numberToInt64(v); !ok {
				return nil, dataErr("Unexpected type in Cast transformation: %s", javaClass(v))
			}
		}
		switch target {
		case connect.Int8:
			return int8(n), nil
		case connect.Int16:
			return int16(n), nil
		case connect.Int32:
			return int32(n), nil
		}
		return n, nil
	case connect.Float32, connect.Float64:
		var f float64
		switch x := v.(type) {
		case string:
			p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil && !isRangeErr(err) {
				return nil, outOfRange()
			}
			f = p
			if target == connect.Float32 {
				p32, err := strconv.ParseFloat(strings.TrimSpace(x), 32)
				if err != nil && !isRangeErr(err) {
					return nil, outOfRange()
				}
				return float32(p32), nil
			}
		case bool:
			if x {
				f = 1
			}
		case float32:
			if target == connect.Float32 {
				return x, nil
			}
			f = float64(x)
		case int64:
			if target == connect.Float32 {
				return float32(x), nil // Java's (float) long rounds once
			}
			f = float64(x)
		default:
			var ok bool
			if f, ok = numberToFloat64(v); !ok {
				return nil, dataErr("Unexpected type in Cast transformation: %s", javaClass(v))
			}
		}
		if target == connect.Float32 {
			return float32(f), nil
		}
		return f, nil
	case connect.Boolean:
		switch x := v.(type) {
		case string:
			return strings.EqualFold(x, "true"), nil
		case bool:
			return x, nil
		default:
			n, ok := numberToInt64(v)
			if !ok {
				return nil, dataErr("Unexpected type in Cast transformation: %s", javaClass(v))
			}
			return n != 0, nil
		}
	case connect.String:
		switch x := v.(type) {
		case time.Time:
			return javaDateString(x), nil
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		}
		return javaString(v), nil
	}
	return nil, dataErr("%s is not supported in the Cast transformation.", target)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaIntLiteral accepts what Java's Integer.parseInt does: an optional
// sign and decimal digits (a leading '+' is allowed, spaces are not).
func javaIntLiteral(s string) string {
	if strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "+-") {
		return s[1:]
	}
	return s
}

// numberToInt64 is Java's Number.longValue for Connect's numeric values
// (floating point truncates toward zero and saturates, as Java's casts do).
func numberToInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float32:
		return javaF2L(float64(x)), true
	case float64:
		return javaF2L(x), true
	case connect.Decimal:
		q := new(big.Int).Set(x.Unscaled)
		if x.Scale > 0 {
			q.Quo(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		} else if x.Scale < 0 {
			q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-x.Scale)), nil))
		}
		// BigInteger.longValue keeps the low 64 bits.
		lo := new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64))
		return int64(lo.Uint64()), true
	}
	return 0, false
}

// javaNarrowFloat is Java's Double.byteValue/shortValue/intValue/
// longValue: saturate to int (or long), then narrow by dropping bits.
func javaNarrowFloat(f float64, target connect.Type) int64 {
	if target == connect.Int64 {
		return javaF2L(f)
	}
	var i int32
	switch {
	case math.IsNaN(f):
	case f >= math.MaxInt32:
		i = math.MaxInt32
	case f <= math.MinInt32:
		i = math.MinInt32
	default:
		i = int32(f)
	}
	return int64(i)
}

func javaF2L(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func numberToFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case connect.Decimal:
		return x.Float64(), true
	}
	return 0, false
}

// inferType is Kafka's ConnectSchema.schemaType(value.getClass()).
func inferType(v any) connect.Type {
	switch v.(type) {
	case int8:
		return connect.Int8
	case int16:
		return connect.Int16
	case int32:
		return connect.Int32
	case int64:
		return connect.Int64
	case float32:
		return connect.Float32
	case float64:
		return connect.Float64
	case bool:
		return connect.Boolean
	case string:
		return connect.String
	case []byte:
		return connect.Bytes
	case []any:
		return connect.Array
	case map[string]any, map[any]any:
		return connect.Map
	case *connect.Struct:
		return connect.StructType
	}
	return 0
}

// javaDateString is Kafka's Values.dateFormatFor(d).format(d) in UTC:
// a time of day for instants on the epoch day, a date for midnights, an
// ISO timestamp otherwise.
func javaDateString(t time.Time) string {
	ms := t.UnixMilli()
	t = t.UTC()
	switch {
	case ms < msPerDay:
		return t.Format("15:04:05.000Z")
	case ms%msPerDay == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

const msPerDay = 24 * 60 * 60 * 1000
