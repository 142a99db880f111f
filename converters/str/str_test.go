package str

import (
	"bytes"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/convtest"
	"github.com/fjordhq/fjord/converters/internal/dump"
	"github.com/fjordhq/fjord/converters/internal/golden"
)

// goldenValues mirrors SimpleGolden.java's anyValues (checked by dump).
func goldenValues() map[string]convtest.Case {
	st := connect.NewStruct().Field("a", connect.Int32Schema).Field("b", connect.OptionalStringSchema).
		Field("c", connect.NewArray(connect.Float64Schema).Optional().Build()).Build()
	out := map[string]convtest.Case{}
	for _, c := range []convtest.Case{
		{Name: "null"}, {Name: "string", Schema: connect.StringSchema, Value: "héllo ☃ 😀"},
		{Name: "empty", Schema: connect.StringSchema, Value: ""},
		{Name: "int8", Schema: connect.Int8Schema, Value: int8(7)}, {Name: "int16", Value: int16(-300)},
		{Name: "int32", Schema: connect.Int32Schema, Value: int32(123456)}, {Name: "int64", Schema: connect.Int64Schema, Value: int64(-5)},
		{Name: "float32", Schema: connect.Float32Schema, Value: float32(1.5e-5)}, {Name: "float64", Schema: connect.Float64Schema, Value: 1e21},
		{Name: "float64_plain", Value: 12.5}, {Name: "boolean", Schema: connect.BooleanSchema, Value: true},
		{Name: "decimal", Value: connect.NewDecimal(-150, 2)}, {Name: "decimal_exp", Value: connect.Decimal{Unscaled: big.NewInt(1), Scale: -5}},
		{Name: "list", Value: []any{int32(1), "a", nil, []any{2.5}}},
		{Name: "map", Value: map[string]any{"k": int64(1), "j": []any{"x", nil}}},
		{Name: "struct", Schema: st, Value: connect.NewStructValue(st).MustPut("a", int32(1)).MustPut("c", []any{0.5, 2.0})},
		{Name: "date", Value: time.UnixMilli(1705322096789).UTC()},
		{Name: "enc", Schema: connect.StringSchema, Value: "aé☃😀"}, {Name: "enc_empty", Schema: connect.StringSchema, Value: ""},
	} {
		out[c.Name] = c
	}
	return out
}

func TestGolden(t *testing.T) {
	cases, err := golden.Read("testdata/golden/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	values := goldenValues()
	for _, gc := range cases {
		c := New()
		if err := c.Configure(gc.Config, false); err != nil {
			t.Fatalf("%v: %v", gc.Config, err)
		}
		switch gc.Op {
		case "from":
			v, ok := values[gc.Name]
			if !ok {
				t.Fatalf("no Go value for %q", gc.Name)
			}
			if dump.Schema(v.Schema) != gc.Schema || dump.Value(v.Value) != gc.Value {
				t.Fatalf("%s: Go case %s %s differs from Kafka's %s %s", gc.Name, dump.Schema(v.Schema), dump.Value(v.Value), gc.Schema, gc.Value)
			}
			out, err := c.FromConnectData("t", nil, v.Schema, v.Value)
			if err != nil || !bytes.Equal(out, gc.OutputBytes()) || (out == nil) != (gc.Output == nil) {
				t.Errorf("%s %v: FromConnectData = %q, %v; Kafka wrote %q", gc.Name, gc.Config, out, err, gc.OutputBytes())
			}
		case "to":
			s, v, err := c.ToConnectData("t", nil, gc.InputBytes())
			if err != nil || dump.Schema(s) != gc.Schema || dump.Value(v) != gc.Value {
				t.Errorf("%q %v: ToConnectData = %s %s %v; Kafka read %s %s", gc.InputBytes(), gc.Config, dump.Schema(s), dump.Value(v), err, gc.Schema, gc.Value)
			}
		}
	}
}

func TestConformance(t *testing.T) {
	var cases []convtest.Case
	for _, c := range convtest.Primitives() {
		if c.Schema.Type == connect.String {
			want := c.Value
			cases = append(cases, c.WithWant(connect.OptionalStringSchema, want))
		}
	}
	cases = append(cases,
		convtest.Case{Name: "int32", Schema: connect.Int32Schema, Value: int32(-7)}.WithWant(connect.OptionalStringSchema, "-7"),
		convtest.Case{Name: "float64", Schema: connect.Float64Schema, Value: 1e21}.WithWant(connect.OptionalStringSchema, "1.0E21"),
		convtest.Case{Name: "decimal", Value: connect.NewDecimal(15, -2)}.WithWant(connect.OptionalStringSchema, "1.5E+3"),
	)
	for _, enc := range []string{"UTF-8", "UTF-16", "UTF-16LE", "ISO-8859-1"} {
		t.Run(enc, func(t *testing.T) {
			cs := cases
			if enc == "ISO-8859-1" { // only Latin-1 survives
				cs = []convtest.Case{convtest.Case{Name: "latin1", Schema: connect.StringSchema, Value: "héllo"}.WithWant(connect.OptionalStringSchema, "héllo")}
			}
			convtest.Run(t, convtest.Suite{
				New:             func() connect.Converter { return New() },
				Props:           map[string]string{EncodingConfig: enc},
				Cases:           cs,
				TombstoneSchema: connect.OptionalStringSchema,
			})
		})
	}
	convtest.RunHeader(t, convtest.HeaderSuite{
		New:        func() connect.HeaderConverter { return NewHeaderConverter() },
		Cases:      cases,
		NullSchema: connect.OptionalStringSchema,
	})
}

func TestUnsupportedEncoding(t *testing.T) {
	err := New().Configure(map[string]string{EncodingConfig: "EBCDIC-XYZ"}, false)
	if err == nil || !strings.Contains(err.Error(), "Unsupported encoding EBCDIC-XYZ") {
		t.Fatalf("got %v", err)
	}
	var ce *connect.ConfigError
	if err := New().Configure(map[string]string{ConverterTypeConfig: "sideways"}, false); err != nil && errors.As(err, &ce) {
		t.Fatalf("converter.type is set by Configure, not refused: %v", err)
	}
}

func TestRegistered(t *testing.T) {
	for _, k := range []plugins.Kind{plugins.Converter, plugins.HeaderConverter} {
		for _, name := range []string{Class, "StringConverter"} {
			p, err := plugins.LookupKind(name, k)
			if err != nil {
				t.Fatal(err)
			}
			switch p.New().(type) {
			case *Converter:
				if k != plugins.Converter {
					t.Fatalf("%s as %s is a Converter", name, k)
				}
			case *HeaderConverter:
				if k != plugins.HeaderConverter {
					t.Fatalf("%s as %s is a HeaderConverter", name, k)
				}
			default:
				t.Fatalf("%s: %T", name, p.New())
			}
		}
	}
}

func FuzzToConnectData(f *testing.F) {
	f.Add([]byte("héllo"))
	f.Add([]byte{0xff, 0xfe, 'a', 0})
	convtest.Fuzz(f, func() connect.Converter {
		c := New()
		_ = c.Configure(map[string]string{EncodingConfig: "UTF-16"}, false)
		return c
	})
}
