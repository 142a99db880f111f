package convtest

import (
	"math"
	"math/big"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Primitives returns one case per primitive type, with edge values, and
// optional schemas with nil values.
func Primitives() []Case {
	return []Case{
		{Name: "int8", Schema: connect.Int8Schema, Value: int8(math.MinInt8)},
		{Name: "int16", Schema: connect.Int16Schema, Value: int16(math.MaxInt16)},
		{Name: "int32", Schema: connect.Int32Schema, Value: int32(-123456789)},
		{Name: "int64", Schema: connect.Int64Schema, Value: int64(math.MaxInt64)},
		{Name: "int64-min", Schema: connect.Int64Schema, Value: int64(math.MinInt64)},
		{Name: "float32", Schema: connect.Float32Schema, Value: float32(3.25)},
		{Name: "float64", Schema: connect.Float64Schema, Value: 1.0 / 3},
		{Name: "float64-tiny", Schema: connect.Float64Schema, Value: 5e-324},
		{Name: "boolean", Schema: connect.BooleanSchema, Value: true},
		{Name: "string", Schema: connect.StringSchema, Value: "héllo \"wörld\" \\ \n ☃ 😀"},
		{Name: "string-empty", Schema: connect.StringSchema, Value: ""},
		{Name: "bytes", Schema: connect.BytesSchema, Value: []byte{0, 1, 0x7f, 0x80, 0xff}},
		{Name: "bytes-empty", Schema: connect.BytesSchema, Value: []byte{}},
		{Name: "optional-int32-nil", Schema: connect.OptionalInt32Schema, Value: nil},
		{Name: "optional-string-nil", Schema: connect.OptionalStringSchema, Value: nil},
	}
}

// Logical returns cases of Decimal, Date, Time and Timestamp.
func Logical() []Case {
	big1, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	return []Case{
		{Name: "decimal", Schema: connect.DecimalSchema(2).Build(), Value: connect.NewDecimal(12345, 2)},
		{Name: "decimal-negative", Schema: connect.DecimalSchema(4).Build(), Value: connect.NewDecimal(-1, 4)},
		{Name: "decimal-big", Schema: connect.DecimalSchema(0).Build(), Value: connect.Decimal{Unscaled: big1, Scale: 0}},
		{Name: "date", Schema: connect.DateSchema().Build(), Value: connect.DaysToDate(19737)},
		{Name: "date-before-epoch", Schema: connect.DateSchema().Build(), Value: connect.DaysToDate(-400)},
		{Name: "time", Schema: connect.TimeSchema().Build(), Value: connect.MillisToTime(45296789)},
		{Name: "timestamp", Schema: connect.TimestampSchema().Build(), Value: time.UnixMilli(1705322096789).UTC()},
		{Name: "optional-timestamp-nil", Schema: connect.TimestampSchema().Optional().Build(), Value: nil},
	}
}

// Structured returns arrays, maps (string and non-string keys) and
// nested structs with optional and defaulted fields.
func Structured() []Case {
	address := connect.NewStruct().Name("com.example.Address").Optional().
		Field("street", connect.StringSchema).
		Field("zip", connect.OptionalInt32Schema).Build()
	person := connect.NewStruct().Name("com.example.Person").Version(1).Doc("a person").
		Field("id", connect.Int64Schema).
		Field("name", connect.StringSchema).
		Field("email", connect.OptionalStringSchema).
		Field("score", connect.NewSchema(connect.Float64).Default(1.5).Build()).
		Field("address", address).
		Field("tags", connect.NewArray(connect.StringSchema).Optional().Build()).
		Field("attrs", connect.NewMap(connect.StringSchema, connect.Int32Schema).Optional().Build()).
		Field("price", connect.DecimalSchema(2).Optional().Build()).
		Field("born", connect.DateSchema().Optional().Build()).
		Build()
	full := connect.NewStructValue(person).MustPut("id", int64(7)).MustPut("name", "Ada").
		MustPut("email", "ada@example.com").MustPut("score", 9.25).
		MustPut("address", connect.NewStructValue(address).MustPut("street", "1 Main St").MustPut("zip", int32(12345))).
		MustPut("tags", []any{"a", "b"}).MustPut("attrs", map[string]any{"x": int32(1), "y": int32(-2)}).
		MustPut("price", connect.NewDecimal(1999, 2)).MustPut("born", connect.DaysToDate(-3650))
	sparse := connect.NewStructValue(person).MustPut("id", int64(-1)).MustPut("name", "").MustPut("score", 0.5)
	return []Case{
		{Name: "array", Schema: connect.NewArray(connect.Int32Schema).Build(), Value: []any{int32(1), int32(2), int32(3)}},
		{Name: "array-empty", Schema: connect.NewArray(connect.StringSchema).Build(), Value: []any{}},
		{Name: "array-optional-elements", Schema: connect.NewArray(connect.OptionalStringSchema).Build(), Value: []any{"a", nil}},
		{Name: "array-of-arrays", Schema: connect.NewArray(connect.NewArray(connect.Int8Schema).Build()).Build(), Value: []any{[]any{int8(1)}, []any{}}},
		{Name: "map-string-keys", Schema: connect.NewMap(connect.StringSchema, connect.Int64Schema).Build(), Value: map[string]any{"a": int64(1), "b": int64(2)}},
		{Name: "map-int-keys", Schema: connect.NewMap(connect.Int32Schema, connect.StringSchema).Build(), Value: map[any]any{int32(1): "one", int32(-2): "minus two"}},
		{Name: "map-empty", Schema: connect.NewMap(connect.StringSchema, connect.StringSchema).Build(), Value: map[string]any{}},
		{Name: "struct", Schema: person, Value: full},
		{Name: "struct-sparse", Schema: person, Value: sparse},
		{Name: "array-of-structs", Schema: connect.NewArray(address).Build(), Value: []any{connect.NewStructValue(address).MustPut("street", "x"), nil}},
	}
}

// Schemaless returns values without a schema, of the types a schemaless
// decoder returns (int64, float64, string, bool, []any, map[string]any).
func Schemaless() []Case {
	return []Case{
		{Name: "schemaless-int64", Value: int64(-42)},
		{Name: "schemaless-float64", Value: 2.5},
		{Name: "schemaless-string", Value: "s"},
		{Name: "schemaless-bool", Value: false},
		{Name: "schemaless-array", Value: []any{int64(1), "two", nil, []any{}}},
		{Name: "schemaless-map", Value: map[string]any{"a": int64(1), "b": map[string]any{"c": []any{true}}, "n": nil}},
	}
}

// All returns Primitives, Logical and Structured.
func All() []Case {
	var out []Case
	out = append(out, Primitives()...)
	out = append(out, Logical()...)
	return append(out, Structured()...)
}
