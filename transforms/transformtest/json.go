package transformtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// This file reads and writes records in the JSON form the golden
// generator (transforms/testdata/golden/Generator.java) prints: schema'd
// data as Kafka's JsonConverter envelope {"schema":…,"payload":…} (with
// replace.null.with.default=false), schemaless data as plain JSON with
// tags for the types JSON cannot tell apart ({"$int32":1},
// {"$bytes":"…"}, {"$date":ms}, {"$decimal":"1.5"}, …).

// RecordJSON is one record of a golden line.
type RecordJSON struct {
	Sink          bool            `json:"sink"`
	Topic         string          `json:"topic"`
	Partition     *int32          `json:"partition"`
	Timestamp     *int64          `json:"timestamp"`
	Offset        *int64          `json:"offset,omitempty"`
	TimestampType string          `json:"timestampType,omitempty"`
	Key           json.RawMessage `json:"key"`
	Value         json.RawMessage `json:"value"`
	Headers       []HeaderJSON    `json:"headers"`
}

// HeaderJSON is one header of a RecordJSON.
type HeaderJSON struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// DecodeRecord builds the connect.Record a RecordJSON describes.
func DecodeRecord(rj *RecordJSON) (*connect.Record, error) {
	r := &connect.Record{Topic: rj.Topic, Partition: -1, Timestamp: -1, Offset: -1, TimestampType: connect.NoTimestampType}
	if rj.Partition != nil {
		r.Partition = *rj.Partition
	}
	if rj.Timestamp != nil {
		r.Timestamp = *rj.Timestamp
	}
	if rj.Sink {
		r.Offset = *rj.Offset
		switch rj.TimestampType {
		case "CreateTime":
			r.TimestampType = connect.CreateTime
		case "LogAppendTime":
			r.TimestampType = connect.LogAppendTime
		}
		r.OriginalTopic, r.OriginalPartition, r.OriginalOffset = r.Topic, r.Partition, r.Offset
	} else {
		r.SourcePartition, r.SourceOffset = map[string]any{}, map[string]any{}
	}
	var err error
	if r.KeySchema, r.Key, err = DecodeEnvelope(rj.Key); err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if r.ValueSchema, r.Value, err = DecodeEnvelope(rj.Value); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	for _, h := range rj.Headers {
		s, v, err := DecodeEnvelope(h.Value)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", h.Key, err)
		}
		r.Headers.Add(h.Key, s, v)
	}
	return r, nil
}

// EncodeRecord is DecodeRecord's inverse.
func EncodeRecord(r *connect.Record) (*RecordJSON, error) {
	rj := &RecordJSON{Sink: r.SourcePartition == nil && r.SourceOffset == nil && r.Offset >= 0, Topic: r.Topic, Headers: []HeaderJSON{}}
	if r.Partition >= 0 {
		p := r.Partition
		rj.Partition = &p
	}
	if r.Timestamp >= 0 {
		ts := r.Timestamp
		rj.Timestamp = &ts
	}
	if rj.Sink {
		o := r.Offset
		rj.Offset = &o
		rj.TimestampType = r.TimestampType.String()
	}
	var err error
	if rj.Key, err = EncodeEnvelope(r.KeySchema, r.Key); err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if rj.Value, err = EncodeEnvelope(r.ValueSchema, r.Value); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	for _, h := range r.Headers {
		b, err := EncodeEnvelope(h.Schema, h.Value)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", h.Key, err)
		}
		rj.Headers = append(rj.Headers, HeaderJSON{Key: h.Key, Value: b})
	}
	return rj, nil
}

type envelope struct {
	Schema  json.RawMessage `json:"schema"`
	Payload json.RawMessage `json:"payload"`
}

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeEnvelope reads {"schema":…,"payload":…}.
func DecodeEnvelope(b json.RawMessage) (*connect.Schema, any, error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, nil, err
	}
	payload, err := decodeAny(env.Payload)
	if err != nil {
		return nil, nil, err
	}
	if len(env.Schema) == 0 || string(env.Schema) == "null" {
		v, err := untag(payload)
		return nil, v, err
	}
	sj, err := decodeAny(env.Schema)
	if err != nil {
		return nil, nil, err
	}
	s, err := schemaFromJSON(sj)
	if err != nil {
		return nil, nil, err
	}
	v, err := valueFromJSON(s, payload)
	return s, v, err
}

var jsonTypes = map[string]connect.Type{
	"int8": connect.Int8, "int16": connect.Int16, "int32": connect.Int32, "int64": connect.Int64,
	"float": connect.Float32, "double": connect.Float64, "boolean": connect.Boolean, "string": connect.String,
	"bytes": connect.Bytes, "array": connect.Array, "map": connect.Map, "struct": connect.StructType,
}

func schemaFromJSON(j any) (*connect.Schema, error) {
	m, ok := j.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object: %v", j)
	}
	tn, _ := m["type"].(string)
	t, ok := jsonTypes[tn]
	if !ok {
		return nil, fmt.Errorf("unknown schema type %q", tn)
	}
	var b *connect.SchemaBuilder
	switch t {
	case connect.Array:
		items, err := schemaFromJSON(m["items"])
		if err != nil {
			return nil, err
		}
		b = connect.NewArray(items)
	case connect.Map:
		k, err := schemaFromJSON(m["keys"])
		if err != nil {
			return nil, err
		}
		v, err := schemaFromJSON(m["values"])
		if err != nil {
			return nil, err
		}
		b = connect.NewMap(k, v)
	default:
		b = connect.NewSchema(t)
	}
	if t == connect.StructType {
		fields, _ := m["fields"].([]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			fs, err := schemaFromJSON(fm)
			if err != nil {
				return nil, err
			}
			name, _ := fm["field"].(string)
			b.Field(name, fs)
		}
	}
	if o, _ := m["optional"].(bool); o {
		b.Optional()
	}
	if n, ok := m["name"].(string); ok {
		b.Name(n)
	}
	if v, ok := m["version"].(json.Number); ok {
		n, _ := v.Int64()
		b.Version(int32(n))
	}
	if d, ok := m["doc"].(string); ok {
		b.Doc(d)
	}
	if p, ok := m["parameters"].(map[string]any); ok {
		for k, v := range p {
			b.Parameter(k, fmt.Sprint(v))
		}
	}
	s, err := b.BuildE()
	if err != nil {
		return nil, err
	}
	if d, ok := m["default"]; ok && d != nil {
		def, err := valueFromJSON(s, d)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		return connect.FromSchema(s).Default(def).BuildE()
	}
	return s, nil
}

func valueFromJSON(s *connect.Schema, j any) (any, error) {
	if j == nil {
		return nil, nil
	}
	num := func() (json.Number, error) {
		n, ok := j.(json.Number)
		if !ok {
			return "", fmt.Errorf("%s value is not a number: %v", s.Type, j)
		}
		return n, nil
	}
	switch s.Name {
	case connect.DecimalName:
		b, err := base64.StdEncoding.DecodeString(j.(string))
		if err != nil {
			return nil, err
		}
		return connect.DecimalFromBytes(s, b)
	case connect.DateName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		d, _ := n.Int64()
		return connect.DaysToDate(int32(d)), nil
	case connect.TimeName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		ms, _ := n.Int64()
		return connect.MillisToTime(int32(ms)), nil
	case connect.TimestampName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		ms, _ := n.Int64()
		return time.UnixMilli(ms).UTC(), nil
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		i, err := n.Int64()
		if err != nil {
			return nil, err
		}
		switch s.Type {
		case connect.Int8:
			return int8(i), nil
		case connect.Int16:
			return int16(i), nil
		case connect.Int32:
			return int32(i), nil
		}
		return i, nil
	case connect.Float32, connect.Float64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil {
			return nil, err
		}
		if s.Type == connect.Float32 {
			return float32(f), nil
		}
		return f, nil
	case connect.Boolean:
		return j.(bool), nil
	case connect.String:
		return j.(string), nil
	case connect.Bytes:
		return base64.StdEncoding.DecodeString(j.(string))
	case connect.Array:
		items := j.([]any)
		out := make([]any, len(items))
		for i, it := range items {
			v, err := valueFromJSON(s.ValueSchema, it)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case connect.Map:
		if s.KeySchema.Type == connect.String {
			m := j.(map[string]any)
			out := make(map[string]any, len(m))
			for k, it := range m {
				v, err := valueFromJSON(s.ValueSchema, it)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}
		out := map[any]any{}
		for _, e := range j.([]any) {
			pair := e.([]any)
			k, err := valueFromJSON(s.KeySchema, pair[0])
			if err != nil {
				return nil, err
			}
			v, err := valueFromJSON(s.ValueSchema, pair[1])
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case connect.StructType:
		m := j.(map[string]any)
		st := connect.NewStructValue(s)
		for _, f := range s.Fields {
			v, err := valueFromJSON(f.Schema, m[f.Name])
			if err != nil {
				return nil, err
			}
			if err := st.Put(f.Name, v); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	return nil, fmt.Errorf("unsupported schema %v", s)
}

func untag(j any) (any, error) {
	switch x := j.(type) {
	case nil, string, bool:
		return x, nil
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return strconv.ParseFloat(x.String(), 64)
		}
		return x.Int64()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := untag(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		if len(x) == 1 {
			for k, v := range x {
				if strings.HasPrefix(k, "$") {
					return untagOne(k, v)
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			v, err := untag(e)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected JSON %T", j)
}

func untagOne(tag string, v any) (any, error) {
	str := fmt.Sprint(v)
	switch tag {
	case "$int8", "$int16", "$int32":
		n, err := strconv.ParseInt(str, 10, 64)
		switch tag {
		case "$int8":
			return int8(n), err
		case "$int16":
			return int16(n), err
		}
		return int32(n), err
	case "$float32":
		f, err := strconv.ParseFloat(str, 32)
		return float32(f), err
	case "$bytes":
		return base64.StdEncoding.DecodeString(str)
	case "$date":
		n, err := strconv.ParseInt(str, 10, 64)
		return time.UnixMilli(n).UTC(), err
	case "$decimal":
		return connect.ParseDecimal(str)
	case "$struct":
		b, _ := json.Marshal(v)
		_, st, err := DecodeEnvelope(b)
		return st, err
	}
	return nil, fmt.Errorf("unknown tag %s", tag)
}

// EncodeEnvelope writes {"schema":…,"payload":…} as the generator does.
func EncodeEnvelope(s *connect.Schema, v any) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteString(`{"schema":`)
	if s == nil {
		b.WriteString(`null,"payload":`)
		if err := writeTagged(&b, v); err != nil {
			return nil, err
		}
	} else {
		if err := writeSchema(&b, s); err != nil {
			return nil, err
		}
		b.WriteString(`,"payload":`)
		if err := writeValue(&b, s, v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var typeNames = map[connect.Type]string{}

func init() {
	for n, t := range jsonTypes {
		typeNames[t] = n
	}
}

func writeJSON(b *bytes.Buffer, v any) {
	out, _ := json.Marshal(v)
	b.Write(out)
}

func writeSchema(b *bytes.Buffer, s *connect.Schema) error {
	b.WriteString(`{"type":`)
	writeJSON(b, typeNames[s.Type])
	switch s.Type {
	case connect.StructType:
		b.WriteString(`,"fields":[`)
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			var fb bytes.Buffer
			if err := writeSchema(&fb, f.Schema); err != nil {
				return err
			}
			// Insert "field" into the field's schema object.
			fs := fb.Bytes()
			b.Write(fs[:len(fs)-1])
			b.WriteString(`,"field":`)
			writeJSON(b, f.Name)
			b.WriteByte('}')
		}
		b.WriteByte(']')
	case connect.Array:
		b.WriteString(`,"items":`)
		if err := writeSchema(b, s.ValueSchema); err != nil {
			return err
		}
	case connect.Map:
		b.WriteString(`,"keys":`)
		if err := writeSchema(b, s.KeySchema); err != nil {
			return err
		}
		b.WriteString(`,"values":`)
		if err := writeSchema(b, s.ValueSchema); err != nil {
			return err
		}
	}
	fmt.Fprintf(b, `,"optional":%t`, s.Optional)
	if s.Name != "" {
		b.WriteString(`,"name":`)
		writeJSON(b, s.Name)
	}
	if s.Version != nil {
		fmt.Fprintf(b, `,"version":%d`, *s.Version)
	}
	if s.Doc != "" {
		b.WriteString(`,"doc":`)
		writeJSON(b, s.Doc)
	}
	if s.Parameters != nil {
		b.WriteString(`,"parameters":`)
		writeJSON(b, s.Parameters)
	}
	if s.Default != nil {
		b.WriteString(`,"default":`)
		if err := writeValue(b, s, s.Default); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func writeFloat(b *bytes.Buffer, f float64, bits int) {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	b.WriteString(s)
}

func writeValue(b *bytes.Buffer, s *connect.Schema, v any) error {
	if v == nil {
		// As Kafka's JsonConverter with replace.null.with.default=false.
		if !s.Optional {
			return fmt.Errorf("Conversion error: null value for field that is required and has no default value")
		}
		b.WriteString("null")
		return nil
	}
	if err := connect.Validate(s, v); err != nil {
		return err
	}
	switch s.Name {
	case connect.DecimalName:
		d := v.(connect.Decimal)
		if scale, err := connect.DecimalScale(s); err == nil && scale != d.Scale {
			return fmt.Errorf("Decimal value has mismatching scale for given Decimal schema. Schema has scale %d, value has scale %d.", scale, d.Scale)
		}
		raw, err := connect.DecimalToBytes(s, d)
		if err != nil {
			return err
		}
		writeJSON(b, base64.StdEncoding.EncodeToString(raw))
		return nil
	case connect.DateName:
		d, err := connect.DateToDays(v.(time.Time))
		if err != nil {
			return err
		}
		fmt.Fprint(b, d)
		return nil
	case connect.TimeName:
		ms, err := connect.TimeToMillis(v.(time.Time))
		if err != nil {
			return err
		}
		fmt.Fprint(b, ms)
		return nil
	case connect.TimestampName:
		fmt.Fprint(b, v.(time.Time).UnixMilli())
		return nil
	}
	switch x := v.(type) {
	case float32:
		writeFloat(b, float64(x), 32)
	case float64:
		writeFloat(b, x, 64)
	case []byte:
		writeJSON(b, base64.StdEncoding.EncodeToString(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, s.ValueSchema, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		keys := sortedKeys(x)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			if err := writeValue(b, s.ValueSchema, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[any]any:
		b.WriteByte('[')
		first := true
		for k, e := range x {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteByte('[')
			if err := writeValue(b, s.KeySchema, k); err != nil {
				return err
			}
			b.WriteByte(',')
			if err := writeValue(b, s.ValueSchema, e); err != nil {
				return err
			}
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case *connect.Struct:
		b.WriteByte('{')
		for i := range x.Schema().Fields {
			f := &x.Schema().Fields[i]
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, f.Name)
			b.WriteByte(':')
			fv, _ := x.GetWithoutDefault(f.Name)
			if err := writeValue(b, f.Schema, fv); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		writeJSON(b, x)
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeTagged(b *bytes.Buffer, v any) error {
	tag := func(t string, x any) {
		b.WriteString(`{"` + t + `":`)
		writeJSON(b, x)
		b.WriteByte('}')
	}
	switch x := v.(type) {
	case nil, string, bool, int64:
		writeJSON(b, x)
	case float64:
		writeFloat(b, x, 64)
	case int8:
		tag("$int8", x)
	case int16:
		tag("$int16", x)
	case int32:
		tag("$int32", x)
	case float32:
		b.WriteString(`{"$float32":`)
		writeFloat(b, float64(x), 32)
		b.WriteByte('}')
	case []byte:
		tag("$bytes", base64.StdEncoding.EncodeToString(x))
	case time.Time:
		tag("$date", x.UnixMilli())
	case connect.Decimal:
		tag("$decimal", javaBigDecimalString(x))
	case *connect.Struct:
		env, err := EncodeEnvelope(x.Schema(), x)
		if err != nil {
			return err
		}
		b.WriteString(`{"$struct":`)
		b.Write(env)
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeTagged(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			if err := writeTagged(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = e
		}
		return writeTagged(b, m)
	default:
		return fmt.Errorf("cannot encode %T schemaless", v)
	}
	return nil
}

func javaBigDecimalString(d connect.Decimal) string {
	digits := new(big.Int).Abs(d.Unscaled).String()
	adjusted := -int64(d.Scale) + int64(len(digits)-1)
	if d.Scale >= 0 && adjusted >= -6 {
		return d.String()
	}
	s := digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	if d.Unscaled.Sign() < 0 {
		s = "-" + s
	}
	if adjusted >= 0 {
		return s + "E+" + strconv.FormatInt(adjusted, 10)
	}
	return s + "E" + strconv.FormatInt(adjusted, 10)
}

// JSONEqual compares two JSON documents: objects by key set, arrays in
// order, numbers by value and kind (an integer literal never equals a
// floating point one: 5 is not 5.0).
func JSONEqual(a, b []byte) (bool, error) {
	x, err := decodeAny(a)
	if err != nil {
		return false, err
	}
	y, err := decodeAny(b)
	if err != nil {
		return false, err
	}
	return jsonEqual(x, y), nil
}

func isFloatLiteral(n json.Number) bool { return strings.ContainsAny(n.String(), ".eE") }

func jsonEqual(x, y any) bool {
	switch a := x.(type) {
	case json.Number:
		b, ok := y.(json.Number)
		if !ok || isFloatLiteral(a) != isFloatLiteral(b) {
			return false
		}
		if !isFloatLiteral(a) {
			return a.String() == b.String()
		}
		fa, _ := strconv.ParseFloat(a.String(), 64)
		fb, _ := strconv.ParseFloat(b.String(), 64)
		// FLOAT32 values are printed by Java's Float.toString, whose
		// shortest digits only round trip at float precision.
		return fa == fb || float32(fa) == float32(fb) || (math.IsNaN(fa) && math.IsNaN(fb))
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return x == y
}
