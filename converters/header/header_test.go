package header

import (
	"bufio"
	"encoding/base64"
	"math"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/convtest"
	"github.com/fjordhq/fjord/converters/internal/dump"
)

// formatCases mirrors HeaderGolden.java's format cases.
func formatCases() map[string]convtest.Case {
	st := connect.NewStruct().Field("a", connect.Int32Schema).Field("b", connect.OptionalStringSchema).
		Field("c", connect.NewSchema(connect.Int8).Default(int8(7)).Build()).
		Field("d", connect.NewArray(connect.Int32Schema).Optional().Build()).Build()
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	out := map[string]convtest.Case{}
	for _, c := range []convtest.Case{
		{Name: "null", Schema: connect.OptionalStringSchema},
		{Name: "string", Schema: connect.StringSchema, Value: `plain "quoted" \ text`},
		{Name: "int8", Schema: connect.Int8Schema, Value: int8(-5)},
		{Name: "int16", Schema: connect.Int16Schema, Value: int16(300)},
		{Name: "int32", Schema: connect.Int32Schema, Value: int32(70000)},
		{Name: "int64", Schema: connect.Int64Schema, Value: int64(math.MinInt64)},
		{Name: "float32", Schema: connect.Float32Schema, Value: float32(0.1)},
		{Name: "float64", Schema: connect.Float64Schema, Value: 1e-7},
		{Name: "float64_nan", Schema: connect.Float64Schema, Value: math.NaN()},
		{Name: "boolean", Schema: connect.BooleanSchema, Value: false},
		{Name: "bytes", Schema: connect.BytesSchema, Value: []byte{0, 0xff, 10}},
		{Name: "array", Schema: connect.NewArray(connect.StringSchema).Build(), Value: []any{`a"b`, `c\d`, nil}},
		{Name: "array_nested", Schema: connect.NewArray(connect.NewArray(connect.Int32Schema).Build()).Build(), Value: []any{[]any{int32(1), int32(2)}, []any{}}},
		{Name: "array_bytes", Schema: connect.NewArray(connect.BytesSchema).Build(), Value: []any{[]byte{1}}},
		{Name: "map", Schema: connect.NewMap(connect.StringSchema, connect.StringSchema).Build(), Value: map[string]any{"k1": int32(1), `k"2`: "v"}},
		{Name: "map_int", Schema: connect.NewMap(connect.Int32Schema, connect.BooleanSchema).Build(), Value: map[any]any{int32(1): true}},
		{Name: "struct", Schema: st, Value: connect.NewStructValue(st).MustPut("a", int32(1)).MustPut("b", "x").MustPut("d", []any{int32(1)})},
		{Name: "struct_nulls", Schema: st, Value: connect.NewStructValue(st).MustPut("a", int32(2))},
		{Name: "decimal", Schema: connect.DecimalSchema(2).Build(), Value: connect.NewDecimal(1234, 2)},
		{Name: "decimal_exp", Schema: connect.DecimalSchema(-3).Build(), Value: connect.Decimal{Unscaled: big.NewInt(15), Scale: -3}},
		{Name: "decimal_tiny", Schema: connect.DecimalSchema(10).Build(), Value: connect.NewDecimal(15, 10)},
		{Name: "date", Schema: connect.DateSchema().Build(), Value: ms(19737 * 86400000)},
		{Name: "date_epoch", Schema: connect.DateSchema().Build(), Value: ms(0)},
		{Name: "time", Schema: connect.TimeSchema().Build(), Value: ms(45296789)},
		{Name: "timestamp", Schema: connect.TimestampSchema().Build(), Value: ms(1705322096789)},
		{Name: "timestamp_midnight", Schema: connect.TimestampSchema().Build(), Value: ms(1705276800000)},
		{Name: "timestamp_negative", Schema: connect.TimestampSchema().Build(), Value: ms(-1)},
		{Name: "timestamp_before_epoch", Schema: connect.TimestampSchema().Build(), Value: ms(-86400000*400 + 5)},
		{Name: "schemaless_string", Value: "s"},
		{Name: "schemaless_long", Value: int64(5)},
	} {
		out[c.Name] = c
	}
	return out
}

func TestGoldenFormat(t *testing.T) {
	f, err := os.Open("testdata/golden/format.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := formatCases()
	c := New()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		n++
		tc, ok := cases[cols[0]]
		if !ok {
			t.Fatalf("no Go case %q", cols[0])
		}
		if dump.Schema(tc.Schema) != cols[1] || dump.Value(tc.Value) != cols[2] {
			t.Fatalf("%s: Go case %s %s differs from Kafka's %s %s", tc.Name, dump.Schema(tc.Schema), dump.Value(tc.Value), cols[1], cols[2])
		}
		got, err := c.FromConnectHeader("t", "k", tc.Schema, tc.Value)
		switch {
		case cols[3] == "null":
			if got != nil || err != nil {
				t.Errorf("%s: %q %v, want nil", tc.Name, got, err)
			}
		case strings.HasPrefix(cols[3], "ok:"):
			want, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(cols[3], "ok:"))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: %q %v, Kafka wrote %q", tc.Name, got, err, want)
			}
		default:
			t.Errorf("%s: unexpected golden result %s", tc.Name, cols[3])
		}
	}
	if n < 25 {
		t.Fatalf("%d cases", n)
	}
}

func TestConformance(t *testing.T) {
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	cases := []convtest.Case{
		{Name: "string", Schema: connect.StringSchema, Value: "hello world"},
		{Name: "int8", Schema: connect.Int8Schema, Value: int8(-5)},
		{Name: "int32-small", Schema: connect.Int32Schema, Value: int32(7)}, // read back as the smallest type
		{Name: "int64", Schema: connect.Int64Schema, Value: int64(math.MaxInt64)},
		{Name: "float32", Schema: connect.Float32Schema, Value: float32(2.5)},
		{Name: "boolean", Schema: connect.BooleanSchema, Value: true},
		{Name: "array", Schema: connect.NewArray(connect.Int16Schema).Build(), Value: []any{int16(300), int16(-300)}},
		{Name: "map", Schema: connect.NewMap(connect.StringSchema, connect.StringSchema).Build(), Value: map[string]any{"a": "x", "b": "y"}},
		{Name: "date", Schema: connect.DateSchema().Build(), Value: ms(19737 * 86400000)},
		{Name: "timestamp", Schema: connect.TimestampSchema().Build(), Value: ms(1705322096789)},
		{Name: "time", Schema: connect.TimeSchema().Build(), Value: ms(45296789)},
		{Name: "decimal-big", Schema: connect.DecimalSchema(0).Build(), Value: connect.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 70)}},
	}
	cases[2] = cases[2].WithWant(connect.Int8Schema, int8(7))
	st := connect.NewStruct().Field("a", connect.Int32Schema).Field("b", connect.StringSchema).Build()
	cases = append(cases, convtest.Case{Name: "struct-as-map", Schema: st, Value: connect.NewStructValue(st).MustPut("a", int32(1)).MustPut("b", "x")}.
		WithWant(&connect.Schema{Type: connect.Map, KeySchema: connect.StringSchema}, map[string]any{"a": int8(1), "b": "x"}))
	convtest.RunHeader(t, convtest.HeaderSuite{
		New:        func() connect.HeaderConverter { return New() },
		Cases:      cases,
		NullSchema: nil,
		WrongTypes: []convtest.Case{{Name: "go-int", Value: 5}, {Name: "channel", Value: make(chan int)}},
	})
}

// Text Kafka's parser cannot read stays text; bytes that are not UTF-8 read as Java reads them.
func TestParseFallbacks(t *testing.T) {
	s, v, err := ParseString(`{"a":[1,null]}`) // null cannot align with INT8: Kafka's parser gives up
	if err != nil || s.Type != connect.String {
		t.Fatalf("%v %v %v", s, v, err)
	}
	b := []byte{0xff, 0xfe}
	hs, hv, err := New().ToConnectHeader("t", "k", b)
	if err != nil || hs.Type != connect.String || hv != "\uFFFD\uFFFD" {
		t.Fatalf("invalid UTF-8 reads as replacement characters, as Java's new String does: %v %q %v", hs, hv, err)
	}
	// A map keyed by arrays (which a Go map cannot hold) stays text.
	s, v, err = ParseString("{[1]:2}")
	if err != nil || s.Type != connect.String || v != "{[1]:2}" {
		t.Fatalf("%v %v %v", s, v, err)
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{Class, "SimpleHeaderConverter"} {
		p, err := plugins.LookupKind(name, plugins.HeaderConverter)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.New().(*Converter); !ok {
			t.Fatalf("%T", p.New())
		}
	}
}

func FuzzParseString(f *testing.F) {
	for _, s := range []string{"", "true", "[1,2.5]", `{"a":[1,{"b":null}]}`, "2024-01-15T12:34:56.789Z", "1e400", `["x\"y"]`, "\xff"} {
		f.Add([]byte(s))
	}
	convtest.FuzzHeader(f, func() connect.HeaderConverter { return New() })
}
