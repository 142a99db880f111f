package json

import (
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// goldenCase mirrors one fromConnectData case of
// testdata/kafkagen/JsonGolden.java; the golden test checks that both
// sides built the same schema and value (by their dumps) before
// comparing bytes.
type goldenCase struct {
	schema *connect.Schema
	value  any
}

func suffix(cfg string) string {
	if cfg == "" {
		return ""
	}
	r := strings.NewReplacer("schemas.enable=false", "nos", "replace.null.with.default=false", "noreplace",
		"decimal.format=NUMERIC", "numeric", "decimal.format=numeric", "numeric", ",", "_")
	return "_" + r.Replace(cfg)
}

func dec(s string) connect.Decimal {
	d, err := connect.ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

func days(n int64) time.Time { return time.UnixMilli(n * 86400000).UTC() }

func goldenCases() map[string]goldenCase {
	cases := map[string]goldenCase{}
	add := func(name string, s *connect.Schema, v any) { cases[name] = goldenCase{s, v} }
	for _, cfg := range []string{"", "schemas.enable=false"} {
		p := ""
		if cfg != "" {
			p = "nos_"
		}
		add(p+"int8", connect.Int8Schema, int8(-42))
		add(p+"int16", connect.Int16Schema, int16(31000))
		add(p+"int32", connect.Int32Schema, int32(math.MinInt32))
		add(p+"int64", connect.Int64Schema, int64(math.MaxInt64))
		add(p+"float32", connect.Float32Schema, float32(3.14))
		add(p+"float64", connect.Float64Schema, 2.718281828459045)
		add(p+"boolean", connect.BooleanSchema, true)
		add(p+"string", connect.StringSchema, "héllo \"q\" \\ / \n\t\r\b\f \u0001\u001f\u007f \u2028 ☃ 😀 </script>")
		add(p+"bytes", connect.BytesSchema, []byte{0, 1, 2, 0xfe, 0xff, 0x7f, 0x10})
		add(p+"empty_string", connect.StringSchema, "")
		add(p+"empty_bytes", connect.BytesSchema, []byte{})
		add(p+"optional_null", connect.OptionalStringSchema, nil)
		add(p+"null_null", nil, nil)
		add(p+"required_null", connect.Int32Schema, nil)
		add(p+"default_for_null", connect.NewSchema(connect.Int32).Default(int32(5)).Build(), nil)
		add(p+"wrong_type", connect.Int32Schema, "not an int")
	}
	doubles := []float64{0.0, math.Copysign(0, -1), 1.0, 100.0, 1e7, 9999999.0, 1e-3, 9.99e-4, 123456789.0, 1.5e300, 1e-7, 4.9e-324,
		1.7976931348623157e308, 0.1, 1.0 / 3, -2.5e-10, math.NaN(), math.Inf(1), math.Inf(-1)}
	for i, f := range doubles {
		add("double_"+itoa(i), connect.Float64Schema, f)
	}
	floats := []float32{0, 1, 0.1, 1e-5, 3.4028235e38, 1.4e-45, 16777216, 1e7, 123.456, float32(math.NaN())}
	for i, f := range floats {
		add("float_"+itoa(i), connect.Float32Schema, f)
	}

	named := connect.NewSchema(connect.String).Name("com.example.Name").Version(3).Doc("a \"doc\"").
		Parameter("b", "1").Parameter("a", "2").Parameter("c", "x\ny").Optional().Default("dflt").Build()
	add("schema_attrs", named, "v")
	add("schema_attrs_null", named, nil)
	add("schema_attrs_null_noreplace", named, nil)

	arrInt := connect.NewArray(connect.Int32Schema).Build()
	add("array_int32", arrInt, []any{int32(1), int32(2), int32(3)})
	add("array_empty", arrInt, []any{})
	arrOpt := connect.NewArray(connect.OptionalStringSchema).Optional().Build()
	add("array_optional_elems", arrOpt, []any{"a", nil, "c"})
	add("array_null_elem_required", arrInt, []any{int32(1), nil})
	mapStr := connect.NewMap(connect.StringSchema, connect.Int64Schema).Build()
	add("map_string_keys", mapStr, map[string]any{"b": int64(2), "a": int64(1), "c": int64(-3)})
	mapInt := connect.NewMap(connect.Int32Schema, connect.StringSchema).Build()
	mi := map[any]any{int32(2): "two", int32(1): "one", int32(-7): "minus seven"}
	add("map_int_keys", mapInt, mi)
	add("nos_map_int_keys", mapInt, mi)
	add("map_empty", mapStr, map[string]any{})
	arrArr := connect.NewArray(connect.NewArray(connect.Int8Schema).Build()).Build()
	add("array_of_arrays", arrArr, []any{[]any{int8(1), int8(2)}, []any{}})

	address := connect.NewStruct().Name("com.example.Address").Optional().
		Field("street", connect.StringSchema).
		Field("zip", connect.OptionalInt32Schema).Build()
	person := connect.NewStruct().Name("com.example.Person").Version(2).Doc("A person").
		Field("id", connect.Int64Schema).
		Field("name", connect.StringSchema).
		Field("email", connect.OptionalStringSchema).
		Field("age", connect.NewSchema(connect.Int32).Optional().Default(int32(18)).Build()).
		Field("active", connect.NewSchema(connect.Boolean).Default(true).Build()).
		Field("address", address).
		Field("tags", connect.NewArray(connect.StringSchema).Optional().Build()).
		Field("scores", connect.NewMap(connect.StringSchema, connect.Float64Schema).Optional().Build()).
		Field("fi\"eld", connect.OptionalBytesSchema).
		Build()
	p1 := connect.NewStructValue(person).MustPut("id", int64(1)).MustPut("name", "Ada").MustPut("email", nil).
		MustPut("address", connect.NewStructValue(address).MustPut("street", "1 Main St").MustPut("zip", int32(12345))).
		MustPut("tags", []any{"x", "y"}).MustPut("scores", map[string]any{"math": 9.5, "art": 7.0}).
		MustPut("fi\"eld", []byte{9})
	for _, cfg := range []string{"", "schemas.enable=false", "replace.null.with.default=false", "schemas.enable=false,replace.null.with.default=false"} {
		add("struct_person"+suffix(cfg), person, p1)
	}
	p2 := connect.NewStructValue(person).MustPut("id", int64(-1)).MustPut("name", "").MustPut("active", false)
	add("struct_person_sparse", person, p2)
	add("struct_person_sparse_noreplace", person, p2)
	other := connect.NewStruct().Field("x", connect.Int32Schema).Build()
	add("struct_mismatch", person, connect.NewStructValue(other).MustPut("x", int32(1)))
	arrStruct := connect.NewArray(address).Build()
	add("array_of_structs", arrStruct, []any{connect.NewStructValue(address).MustPut("street", "a"), nil})
	mapStruct := connect.NewMap(connect.StringSchema, address).Build()
	add("map_of_structs", mapStruct, map[string]any{"home": connect.NewStructValue(address).MustPut("street", "h").MustPut("zip", int32(1))})

	dec2 := connect.DecimalSchema(2).Build()
	for _, cfg := range []string{"", "decimal.format=NUMERIC", "schemas.enable=false", "schemas.enable=false,decimal.format=numeric"} {
		s := suffix(cfg)
		add("decimal"+s, dec2, dec("12345.67"))
		add("decimal_neg"+s, dec2, dec("-0.01"))
		add("decimal_128"+s, dec2, dec("1.28"))
		add("decimal_big"+s, connect.DecimalSchema(0).Build(), dec("-123456789012345678901234567890"))
		add("decimal_negscale"+s, connect.DecimalSchema(-2).Build(), connect.Decimal{Unscaled: big.NewInt(15), Scale: -2})
		add("decimal_tiny"+s, connect.DecimalSchema(9).Build(), connect.Decimal{Unscaled: big.NewInt(1), Scale: 9})
		add("decimal_wrong_scale"+s, dec2, dec("1.5"))
	}
	add("decimal_debezium", connect.DecimalSchema(3).Parameter("connect.decimal.precision", "10").Optional().Build(), dec("3.140"))
	add("date", connect.DateSchema().Build(), days(19000))
	add("date_negative", connect.DateSchema().Build(), days(-3))
	add("date_not_midnight", connect.DateSchema().Build(), time.UnixMilli(19000*86400000+1).UTC())
	add("time", connect.TimeSchema().Build(), time.UnixMilli(45296789).UTC())
	add("timestamp", connect.TimestampSchema().Build(), time.UnixMilli(1700000000123).UTC())
	add("timestamp_negative", connect.TimestampSchema().Build(), time.UnixMilli(-1000).UTC())
	add("nos_timestamp", connect.TimestampSchema().Build(), time.UnixMilli(1700000000123).UTC())
	logical := connect.NewStruct().Name("L").
		Field("d", connect.DecimalSchema(2).Optional().Default(dec("1.00")).Build()).
		Field("date", connect.DateSchema().Optional().Default(days(0)).Build()).
		Field("time", connect.TimeSchema().Optional().Build()).
		Field("ts", connect.TimestampSchema().Default(days(1)).Build()).
		Field("arr", connect.NewArray(connect.Int32Schema).Optional().Default([]any{int32(1), int32(2)}).Build()).
		Field("map", connect.NewMap(connect.Int8Schema, connect.BooleanSchema).Optional().Build()).
		Build()
	l1 := connect.NewStructValue(logical).MustPut("d", dec("-9.99")).MustPut("time", time.UnixMilli(1000).UTC()).
		MustPut("ts", time.UnixMilli(1700000000123).UTC()).MustPut("map", map[any]any{int8(3): true, int8(-1): false})
	for _, cfg := range []string{"", "decimal.format=NUMERIC", "schemas.enable=false", "replace.null.with.default=false"} {
		add("struct_logical"+suffix(cfg), logical, l1)
		add("struct_logical_empty"+suffix(cfg), logical, connect.NewStructValue(logical))
	}

	sl := map[string]any{"long": int64(5), "int": int32(7), "byte": int8(1), "short": int16(2), "float": float32(1.5),
		"double": 2.25, "bool": false, "str": "s", "null": nil, "bytes": []byte{1, 2},
		"list": []any{int64(1), "two", nil, []any{}}, "map": map[string]any{"nested": map[string]any{}}}
	for _, cfg := range []string{"", "schemas.enable=false"} {
		s := suffix(cfg)
		add("schemaless_map"+s, nil, sl)
		add("schemaless_list"+s, nil, []any{int64(1), 2.5, "x", true, nil})
		add("schemaless_string"+s, nil, "just a string")
		add("schemaless_long"+s, nil, int64(42))
		add("schemaless_int_keys"+s, nil, map[any]any{int64(1): "a", int64(2): "b"})
		add("schemaless_decimal"+s, nil, dec("1.5"))
		add("schemaless_struct"+s, nil, connect.NewStructValue(other).MustPut("x", int32(1)))
	}
	return cases
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }
