package json

import (
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/convtest"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

var jsonWrongTypes = []convtest.Case{
	{Name: "string-for-int32", Schema: connect.Int32Schema, Value: "x"},
	{Name: "int32-for-string", Schema: connect.StringSchema, Value: int32(1)},
	{Name: "nil-for-required", Schema: connect.Int32Schema, Value: nil},
	{Name: "float-for-decimal", Schema: connect.DecimalSchema(2).Build(), Value: 1.5},
	{Name: "int-for-date", Schema: connect.DateSchema().Build(), Value: int32(3)},
	{Name: "decimal-without-schema", Value: connect.NewDecimal(1, 0)},
	{Name: "go-int", Value: 5},
	{Name: "struct-of-other-schema", Schema: connect.NewStruct().Field("a", connect.Int8Schema).Build(),
		Value: connect.NewStructValue(connect.NewStruct().Field("b", connect.Int8Schema).Build()).MustPut("b", int8(1))},
	{Name: "array-with-wrong-element", Schema: connect.NewArray(connect.Int64Schema).Build(), Value: []any{"x"}},
}

func TestConformanceEnvelope(t *testing.T) {
	cases := convtest.All()
	for _, c := range convtest.Schemaless() {
		cases = append(cases, c.WithWant(nil, c.Value))
	}
	convtest.Run(t, convtest.Suite{
		New:        func() connect.Converter { return New() },
		Cases:      cases,
		WrongTypes: jsonWrongTypes,
		BadInputs: [][]byte{[]byte("{"), []byte(`{"payload":1}`), []byte("[1]"), []byte(`{"schema":{"type":"foo"},"payload":1}`),
			[]byte(`{"schema":{"type":"int32"},"payload":null}`), {'"', 0xff, '"'}, {}},
	})
}

func TestConformanceSchemaless(t *testing.T) {
	var cases []convtest.Case
	for _, c := range append(convtest.All(), convtest.Schemaless()...) {
		cases = append(cases, c.WithWant(nil, schemalessWantField(c.Schema, c.Value)))
	}
	convtest.Run(t, convtest.Suite{
		New:        func() connect.Converter { return New() },
		Props:      map[string]string{"schemas.enable": "false"},
		Cases:      cases,
		WrongTypes: jsonWrongTypes,
		BadInputs:  [][]byte{[]byte("{"), []byte("tru"), {0xff}, []byte("1x"), []byte("[1,]")},
	})
}

func TestConformanceHeader(t *testing.T) {
	cases := convtest.All()
	convtest.RunHeader(t, convtest.HeaderSuite{
		New:        func() connect.HeaderConverter { return NewHeaderConverter() },
		Cases:      cases,
		NullSchema: nil,
		WrongTypes: jsonWrongTypes,
		BadInputs:  [][]byte{[]byte("{"), []byte(`{"payload":1}`)},
	})
}

// schemalessWant is what JSON without a schema reads back: integers as
// int64, floating point as float64 (of the printed digits), bytes and
// BASE64 decimals as base64 strings, logical times as their integers,
// structs as maps, maps with non-string keys as [key, value] pairs.
func schemalessWant(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		f, _ := strconv.ParseFloat(jvm.Float(x), 64)
		return f
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case connect.Decimal:
		b, _ := connect.DecimalToBytes(connect.DecimalSchema(x.Scale).Build(), x)
		return base64.StdEncoding.EncodeToString(b)
	case time.Time:
		return nil // replaced by the caller's schema-aware rule below
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = schemalessWant(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = schemalessWant(e)
		}
		return out
	case map[any]any:
		var out []any
		for _, k := range jvm.SortedAnyKeys(x) {
			out = append(out, []any{schemalessWant(k), schemalessWant(x[k])})
		}
		return out
	case *connect.Struct:
		out := map[string]any{}
		s := x.Schema()
		for i := range s.Fields {
			out[s.Fields[i].Name] = schemalessWantField(s.Fields[i].Schema, x.GetField(&s.Fields[i]))
		}
		return out
	}
	return v
}

// schemalessWantField knows the field's schema, which logical times need.
func schemalessWantField(s *connect.Schema, v any) any {
	if t, ok := v.(time.Time); ok && s != nil {
		switch s.Name {
		case connect.DateName:
			d, _ := connect.DateToDays(t)
			return int64(d)
		case connect.TimeName:
			ms, _ := connect.TimeToMillis(t)
			return int64(ms)
		}
		return t.UnixMilli()
	}
	return schemalessWant(v)
}
