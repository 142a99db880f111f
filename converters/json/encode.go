package json

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// encoder appends the JSON of Connect values, as Kafka's JsonConverter
// (convertToJson) builds them and Jackson writes them. It is a value
// per call: keys is scratch space for sorting map keys (a stack: nested
// maps use the part after their parent's keys).
type encoder struct {
	decimalNumeric bool
	replaceNull    bool
	keys           []string
	anyKeys        []any
	// top is the record schema's cached field names, if known.
	top *schemaBytes
}

// Kafka's messages for values that do not fit their schema.
const errRequiredNull = "Conversion error: null value for field that is required and has no default value"

func (e *encoder) value(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		switch {
		case s == nil:
			return append(dst, "null"...), nil
		case s.Default != nil && e.replaceNull:
			return e.value(dst, s, s.Default)
		case s.Optional:
			return append(dst, "null"...), nil
		}
		return dst, &connect.DataError{Msg: errRequiredNull}
	}
	if s != nil && s.Name != "" {
		if out, ok, err := e.logical(dst, s, v); ok {
			return out, err
		}
	}
	var t connect.Type
	if s == nil {
		t = schemaType(v)
		if t == 0 {
			return dst, dataErrorf("Java class %s does not have corresponding schema type.", javaClass(v))
		}
	} else {
		t = s.Type
	}
	ok := true
	switch t {
	case connect.Int8:
		var x int8
		if x, ok = v.(int8); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case connect.Int16:
		var x int16
		if x, ok = v.(int16); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case connect.Int32:
		var x int32
		if x, ok = v.(int32); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case connect.Int64:
		var x int64
		if x, ok = v.(int64); ok {
			return strconv.AppendInt(dst, x, 10), nil
		}
	case connect.Float32:
		var x float32
		if x, ok = v.(float32); ok {
			return appendFloat(dst, float64(x), 32), nil
		}
	case connect.Float64:
		var x float64
		if x, ok = v.(float64); ok {
			return appendFloat(dst, x, 64), nil
		}
	case connect.Boolean:
		var x bool
		if x, ok = v.(bool); ok {
			return strconv.AppendBool(dst, x), nil
		}
	case connect.String:
		var x string
		if x, ok = v.(string); ok {
			return appendString(dst, x), nil
		}
	case connect.Bytes:
		var x []byte
		if x, ok = v.([]byte); ok {
			return appendBase64(dst, x), nil
		}
		return dst, dataErrorf("Invalid type for bytes type: %s", javaClass(v))
	case connect.Array:
		var items []any
		if items, ok = v.([]any); ok {
			return e.array(dst, s, items)
		}
	case connect.Map:
		switch m := v.(type) {
		case map[string]any:
			return e.stringMap(dst, s, m)
		case map[any]any:
			return e.anyMap(dst, s, m)
		}
		ok = false
	case connect.StructType:
		var st *connect.Struct
		if st, ok = v.(*connect.Struct); ok {
			return e.structValue(dst, s, st)
		}
	}
	if s == nil {
		return dst, dataErrorf("Invalid type for unknown schema: %s", javaClass(v))
	}
	return dst, dataErrorf("Invalid type for %s: %s", s.Type, javaClass(v))
}

// schemaType is Kafka's ConnectSchema.schemaType for schemaless values.
func schemaType(v any) connect.Type {
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

// javaClass names a Go value's type in Kafka's messages.
func javaClass(v any) string { return fmt.Sprintf("%T", v) }

func (e *encoder) logical(dst []byte, s *connect.Schema, v any) ([]byte, bool, error) {
	switch s.Name {
	case connect.DecimalName:
		d, ok := v.(connect.Decimal)
		if !ok {
			return dst, true, dataErrorf("Invalid type for Decimal, expected BigDecimal but was %s", javaClass(v))
		}
		if d.Unscaled == nil {
			return dst, true, dataErrorf("Invalid Decimal value: no unscaled value")
		}
		if e.decimalNumeric {
			return jvm.AppendDecimal(dst, d), true, nil
		}
		scale, err := connect.DecimalScale(s)
		if err != nil {
			return dst, true, err
		}
		if d.Scale != scale {
			return dst, true, dataErrorf("Decimal value has mismatching scale for given Decimal schema. Schema has scale %d, value has scale %d.", scale, d.Scale)
		}
		var buf [64]byte
		return appendBase64(dst, appendUnscaled(buf[:0], d.Unscaled)), true, nil
	case connect.DateName, connect.TimeName, connect.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return dst, true, dataErrorf("Invalid type for %s, expected Date but was %s", logicalShort(s.Name), javaClass(v))
		}
		switch s.Name {
		case connect.DateName:
			days, err := connect.DateToDays(t)
			if err != nil {
				return dst, true, err
			}
			return strconv.AppendInt(dst, int64(days), 10), true, nil
		case connect.TimeName:
			ms, err := connect.TimeToMillis(t)
			if err != nil {
				return dst, true, err
			}
			return strconv.AppendInt(dst, int64(ms), 10), true, nil
		}
		return strconv.AppendInt(dst, t.UnixMilli(), 10), true, nil
	}
	return dst, false, nil
}

func logicalShort(name string) string {
	switch name {
	case connect.DateName:
		return "Date"
	case connect.TimeName:
		return "Time"
	case connect.TimestampName:
		return "Timestamp"
	}
	return "Decimal"
}

func (e *encoder) array(dst []byte, s *connect.Schema, items []any) ([]byte, error) {
	var elem *connect.Schema
	if s != nil {
		elem = s.ValueSchema
	}
	dst = append(dst, '[')
	var err error
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = e.value(dst, elem, it); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// stringMap writes a map[string]any: an object, keys sorted (Go maps
// have no order; Kafka writes the Java map's order, which for the
// HashMaps and TreeMaps connectors use is no order or sorted order). A
// map whose key schema is not STRING is written as [[k,v],...] pairs.
func (e *encoder) stringMap(dst []byte, s *connect.Schema, m map[string]any) ([]byte, error) {
	var ks, vs *connect.Schema
	objectMode := true
	if s != nil {
		ks, vs = s.KeySchema, s.ValueSchema
		objectMode = ks.Type == connect.String
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[base:]
	slices.Sort(keys)
	defer func() { e.keys = e.keys[:base] }()
	var err error
	if objectMode {
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			if dst, err = e.value(dst, vs, m[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, '[')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		if dst, err = e.value(dst, ks, k); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
		if dst, err = e.value(dst, vs, m[k]); err != nil {
			return dst, err
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// anyMap writes a map[any]any: pairs unless every key is a string
// (schemaless) or the key schema is STRING.
func (e *encoder) anyMap(dst []byte, s *connect.Schema, m map[any]any) ([]byte, error) {
	var ks, vs *connect.Schema
	objectMode := true
	if s != nil {
		ks, vs = s.KeySchema, s.ValueSchema
		objectMode = ks.Type == connect.String
	} else {
		for k := range m {
			if _, ok := k.(string); !ok {
				objectMode = false
				break
			}
		}
	}
	base := len(e.anyKeys)
	for k := range m {
		e.anyKeys = append(e.anyKeys, k)
	}
	keys := e.anyKeys[base:]
	slices.SortFunc(keys, jvm.CompareKeys)
	defer func() {
		clear(e.anyKeys[base:])
		e.anyKeys = e.anyKeys[:base]
	}()
	var err error
	if objectMode {
		dst = append(dst, '{')
		var kb []byte
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			// Kafka converts the key and takes its text (asText()).
			if kb, err = e.value(kb[:0], ks, k); err != nil {
				return dst, err
			}
			if ksText, isString := k.(string); isString {
				dst = appendString(dst, ksText)
			} else {
				dst = appendString(dst, string(kb))
			}
			dst = append(dst, ':')
			if dst, err = e.value(dst, vs, m[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, '[')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		if dst, err = e.value(dst, ks, k); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
		if dst, err = e.value(dst, vs, m[k]); err != nil {
			return dst, err
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

func (e *encoder) structValue(dst []byte, s *connect.Schema, st *connect.Struct) ([]byte, error) {
	if ss := st.Schema(); ss != s && !ss.Equal(s) {
		return dst, &connect.DataError{Msg: "Mismatching schema."}
	}
	dst = append(dst, '{')
	var err error
	var names []byte
	var ends []int
	if e.top != nil && e.top.s == s && e.top.ends != nil {
		names, ends = e.top.names, e.top.ends
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if ends != nil {
			start := 0
			if i > 0 {
				start = ends[i-1]
			}
			dst = append(dst, names[start:ends[i]]...)
		} else {
			dst = appendFieldName(dst, f.Name)
		}
		if dst, err = e.value(dst, f.Schema, st.GetFieldWithoutDefault(f)); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFieldName appends "name": for the usual plain names without
// scanning for escapes twice.
func appendFieldName(dst []byte, name string) []byte {
	dst = appendString(dst, name)
	return append(dst, ':')
}

// appendFloat writes Java's Float/Double.toString, or, for NaN and the
// infinities, the quoted strings Jackson writes.
func appendFloat(dst []byte, f float64, bits int) []byte {
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		dst = append(dst, '"')
		if bits == 32 {
			dst = jvm.AppendFloat(dst, float32(f))
		} else {
			dst = jvm.AppendDouble(dst, f)
		}
		return append(dst, '"')
	}
	if bits == 32 {
		return jvm.AppendFloat(dst, float32(f))
	}
	return jvm.AppendDouble(dst, f)
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendString writes s quoted as Jackson does: ", \ and control
// characters escaped (\n \t \r \b \f short, others \u00XX), characters
// outside the BMP as escaped UTF-16 surrogate pairs (\uD83D\uDE00),
// everything else (including / and U+2028) as UTF-8. Invalid UTF-8, which
// a Java string cannot hold, becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			// A run of plain ASCII, eight bytes at a time.
			i += plainRunString(s[i:])
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r > 0xffff:
			dst = append(dst, s[start:i]...)
			r -= 0x10000
			dst = appendU(dst, 0xd800+(r>>10))
			dst = appendU(dst, 0xdc00+(r&0x3ff))
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789ABCDEF"

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

func dataErrorf(format string, args ...any) error {
	return &connect.DataError{Msg: fmt.Sprintf(format, args...)}
}
