package format

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// The rich schema the round trips use: every primitive, optional fields
// holding nulls, the logical types, a nested struct, arrays and maps.
var (
	innerSchema = connect.NewStruct().Name("com.example.Inner").
			Field("a", connect.Int32Schema).
			Field("b", connect.OptionalStringSchema).Build()
	optInnerSchema = connect.FromSchema(innerSchema).Optional().Build()
	decSchema      = connect.DecimalSchema(2).Build()
	optDecSchema   = connect.DecimalSchema(3).Optional().Build()
	dateSchema     = connect.DateSchema().Build()
	timeSchema     = connect.TimeSchema().Build()
	tsSchema       = connect.TimestampSchema().Build()
	optTsSchema    = connect.TimestampSchema().Optional().Build()

	richSchema = connect.NewStruct().Name("com.example.Rich").Version(3).
			Field("i8", connect.Int8Schema).
			Field("i16", connect.Int16Schema).
			Field("i32", connect.Int32Schema).
			Field("i64", connect.Int64Schema).
			Field("f32", connect.Float32Schema).
			Field("f64", connect.Float64Schema).
			Field("flag", connect.BooleanSchema).
			Field("str", connect.StringSchema).
			Field("raw", connect.BytesSchema).
			Field("opt_str", connect.OptionalStringSchema).
			Field("opt_i64", connect.OptionalInt64Schema).
			Field("dec", decSchema).
			Field("opt_dec", optDecSchema).
			Field("day", dateSchema).
			Field("tod", timeSchema).
			Field("ts", tsSchema).
			Field("opt_ts", optTsSchema).
			Field("inner", innerSchema).
			Field("opt_inner", optInnerSchema).
			Field("tags", connect.NewArray(connect.StringSchema).Build()).
			Field("inners", connect.NewArray(innerSchema).Build()).
			Field("opt_longs", connect.NewArray(connect.Int64Schema).Optional().Build()).
			Field("counts", connect.NewMap(connect.StringSchema, connect.Int32Schema).Build()).
			Field("names", connect.NewMap(connect.Int32Schema, connect.StringSchema).Build()).
			Build()

	// listsSchema has an array of optional items, which makes Confluent
	// write three-level lists.
	listsSchema = connect.NewStruct().Name("com.example.Lists").
			Field("id", connect.Int64Schema).
			Field("maybe", connect.NewArray(connect.OptionalInt32Schema).Build()).
			Field("nested", connect.NewArray(connect.NewArray(connect.StringSchema).Build()).Build()).
			Field("by_key", connect.NewMap(connect.StringSchema, connect.OptionalStringSchema).Optional().Build()).
			Build()
)

func inner(a int32, b any) *connect.Struct { return innerOf(innerSchema, a, b) }

func optInner(a int32, b any) *connect.Struct { return innerOf(optInnerSchema, a, b) }

func innerOf(s *connect.Schema, a int32, b any) *connect.Struct {
	st := connect.NewStructValue(s)
	st.MustPut("a", a)
	if b != nil {
		st.MustPut("b", b)
	}
	return st
}

func dec(unscaled int64, scale int32) connect.Decimal { return connect.NewDecimal(unscaled, scale) }

// richRecords are three values of richSchema: all set, nulls and empty
// collections, extremes.
func richRecords() []*connect.Struct {
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	tod := time.UnixMilli(13*3600000 + 45*60000 + 1234).UTC()
	ts := time.UnixMilli(1718000000123).UTC()
	big1 := connect.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 80), Scale: 2}
	r1 := connect.NewStructValue(richSchema).
		MustPut("i8", int8(-8)).MustPut("i16", int16(1600)).MustPut("i32", int32(-320000)).
		MustPut("i64", int64(1)<<40).MustPut("f32", float32(1.5)).MustPut("f64", 2.25).
		MustPut("flag", true).MustPut("str", "héllo \"wörld\"\n").MustPut("raw", []byte{0, 1, 2, 0xff}).
		MustPut("opt_str", "present").MustPut("opt_i64", int64(-7)).
		MustPut("dec", dec(-12345, 2)).MustPut("opt_dec", dec(999, 3)).
		MustPut("day", day).MustPut("tod", tod).MustPut("ts", ts).MustPut("opt_ts", ts.Add(time.Hour)).
		MustPut("inner", inner(1, "one")).MustPut("opt_inner", optInner(2, nil)).
		MustPut("tags", []any{"a", "b", ""}).
		MustPut("inners", []any{inner(3, "x"), inner(4, nil)}).
		MustPut("opt_longs", []any{int64(1), int64(-1)}).
		MustPut("counts", map[string]any{"x": int32(1), "y": int32(2)}).
		MustPut("names", map[any]any{int32(1): "one", int32(-2): "minus two"})
	r2 := connect.NewStructValue(richSchema).
		MustPut("i8", int8(127)).MustPut("i16", int16(-32768)).MustPut("i32", int32(0)).
		MustPut("i64", int64(-1)).MustPut("f32", float32(-0.25)).MustPut("f64", -1e300).
		MustPut("flag", false).MustPut("str", "").MustPut("raw", []byte{}).
		MustPut("dec", big1).
		MustPut("day", time.Unix(0, 0).UTC()).MustPut("tod", time.Unix(0, 0).UTC()).MustPut("ts", time.UnixMilli(-1).UTC()).
		MustPut("inner", inner(0, nil)).
		MustPut("tags", []any{}).MustPut("inners", []any{}).
		MustPut("counts", map[string]any{}).MustPut("names", map[any]any{})
	r3 := connect.NewStructValue(richSchema).
		MustPut("i8", int8(-128)).MustPut("i16", int16(0)).MustPut("i32", int32(2147483647)).
		MustPut("i64", int64(-9223372036854775808)).MustPut("f32", float32(3.4e38)).MustPut("f64", 0.1).
		MustPut("flag", true).MustPut("str", "日本語").MustPut("raw", bytes.Repeat([]byte{7}, 300)).
		MustPut("opt_str", "").MustPut("opt_dec", dec(-1, 3)).
		MustPut("dec", dec(0, 2)).
		MustPut("day", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)).MustPut("tod", time.UnixMilli(86399999).UTC()).
		MustPut("ts", time.UnixMilli(253402300799999).UTC()).
		MustPut("inner", inner(-1, "")).MustPut("opt_inner", optInner(5, "five")).
		MustPut("tags", []any{"only"}).MustPut("inners", []any{inner(6, "six")}).
		MustPut("opt_longs", []any{}).
		MustPut("counts", map[string]any{"z": int32(-3)}).MustPut("names", map[any]any{int32(0): ""})
	return []*connect.Struct{r1, r2, r3}
}

func listsRecords() []*connect.Struct {
	r1 := connect.NewStructValue(listsSchema).MustPut("id", int64(1)).
		MustPut("maybe", []any{int32(1), nil, int32(3)}).
		MustPut("nested", []any{[]any{"a", "b"}, []any{}, []any{"c"}}).
		MustPut("by_key", map[string]any{"k": "v", "n": nil})
	r2 := connect.NewStructValue(listsSchema).MustPut("id", int64(2)).
		MustPut("maybe", []any{}).MustPut("nested", []any{})
	r3 := connect.NewStructValue(listsSchema).MustPut("id", int64(3)).
		MustPut("maybe", []any{nil}).MustPut("nested", []any{[]any{}}).
		MustPut("by_key", map[string]any{})
	return []*connect.Struct{r1, r2, r3}
}

// sameValue compares Connect values by content: structs by field names
// and values (a schema read back carries Avro's extra parameters).
func sameValue(a, b any) error {
	switch x := a.(type) {
	case *connect.Struct:
		y, ok := b.(*connect.Struct)
		if !ok {
			return fmt.Errorf("struct vs %T", b)
		}
		if len(x.Schema().Fields) != len(y.Schema().Fields) {
			return fmt.Errorf("%d fields vs %d", len(x.Schema().Fields), len(y.Schema().Fields))
		}
		for _, f := range x.Schema().Fields {
			yv, err := y.GetWithoutDefault(f.Name)
			if err != nil {
				return err
			}
			xv, _ := x.GetWithoutDefault(f.Name)
			if err := sameValue(xv, yv); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
		}
		return nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("array %v vs %v", a, b)
		}
		for i := range x {
			if err := sameValue(x[i], y[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("map %v vs %v", a, b)
		}
		for k, v := range x {
			if err := sameValue(v, y[k]); err != nil {
				return fmt.Errorf("[%q]: %w", k, err)
			}
		}
		return nil
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("map %v vs %v", a, b)
		}
		for k, v := range x {
			if err := sameValue(v, y[k]); err != nil {
				return fmt.Errorf("[%v]: %w", k, err)
			}
		}
		return nil
	}
	if !connect.ValuesEqual(a, b) {
		return fmt.Errorf("%#v (%T) vs %#v (%T)", a, a, b, b)
	}
	return nil
}

// writeAll writes records with f and returns the object.
func writeAll(t testing.TB, f Format, s *connect.Schema, values ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if err := w.Write(s, v); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type record struct {
	s *connect.Schema
	v any
}

// readAll reads every record of an object with f.
func readAll(t testing.TB, f Format, b []byte) []record {
	t.Helper()
	r, err := f.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	for {
		s, v, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("read %d: %v", len(out), err)
		}
		out = append(out, record{s, v})
	}
}

func mustNew(t testing.TB, class string, props map[string]string) Format {
	t.Helper()
	f, err := New(class, props)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func structsAsAny(sts []*connect.Struct) []any {
	out := make([]any, len(sts))
	for i, s := range sts {
		out[i] = s
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
