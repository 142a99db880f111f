package number

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/convtest"
	"github.com/fjordhq/fjord/converters/internal/dump"
	"github.com/fjordhq/fjord/converters/internal/golden"
)

// goldenValues mirrors SimpleGolden.java's numValues.
var goldenValues = map[string]convtest.Case{
	"null": {}, "int8": {Schema: connect.Int8Schema, Value: int8(-1)}, "int16": {Schema: connect.Int16Schema, Value: int16(0x1234)},
	"int32": {Schema: connect.Int32Schema, Value: int32(-123456789)}, "int64": {Schema: connect.Int64Schema, Value: int64(0x0102030405060708)},
	"float32": {Schema: connect.Float32Schema, Value: float32(-1.5)}, "float64": {Schema: connect.Float64Schema, Value: math.Pi},
	"nan": {Value: math.NaN()}, "boolean_true": {Schema: connect.BooleanSchema, Value: true}, "boolean_false": {Value: false},
	"string": {Schema: connect.StringSchema, Value: "5"}, "int64_schema_int32": {Schema: connect.Int32Schema, Value: int64(5)},
}

func byClass(class string) *Kind {
	for _, k := range kinds {
		if k.class == class {
			return k
		}
	}
	return nil
}

// sameMessage compares Kafka's message with ours; Kafka names Java
// classes where we name Go types, and puts causes after its message.
func sameMessage(java, got string) bool {
	if i := strings.Index(java, "class "); i >= 0 {
		return strings.HasPrefix(got, java[:i])
	}
	return strings.HasPrefix(got, java)
}

func TestGolden(t *testing.T) {
	cases, err := golden.Read("testdata/golden/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, gc := range cases {
		k := byClass(gc.Class)
		if k == nil {
			t.Fatalf("no converter for %s", gc.Class)
		}
		c := New(k)
		if err := c.Configure(nil, false); err != nil {
			t.Fatal(err)
		}
		switch gc.Op {
		case "from":
			v := goldenValues[gc.Name]
			if dump.Schema(v.Schema) != gc.Schema || dump.Value(v.Value) != gc.Value {
				t.Fatalf("%s: Go case differs from Kafka's %s %s", gc.Name, gc.Schema, gc.Value)
			}
			out, err := c.FromConnectData("t", nil, v.Schema, v.Value)
			if gc.Error != "" {
				if err == nil || !sameMessage(gc.Error, err.Error()) {
					t.Errorf("%s %s: got %x, %v; Kafka raised %q", k.alias, gc.Name, out, err, gc.Error)
				}
				continue
			}
			if err != nil || !bytes.Equal(out, gc.OutputBytes()) || (out == nil) != (gc.Output == nil) {
				t.Errorf("%s %s: got %x, %v; Kafka wrote %x", k.alias, gc.Name, out, err, gc.OutputBytes())
			}
		case "to":
			s, v, err := c.ToConnectData("t", nil, gc.InputBytes())
			if gc.Error != "" {
				if err == nil || !sameMessage(gc.Error, err.Error()) {
					t.Errorf("%s %x: got %v, %v; Kafka raised %q", k.alias, gc.InputBytes(), v, err, gc.Error)
				}
				continue
			}
			if err != nil || dump.Schema(s) != gc.Schema || dump.Value(v) != gc.Value {
				t.Errorf("%s %x: got %s %s %v; Kafka read %s %s", k.alias, gc.InputBytes(), dump.Schema(s), dump.Value(v), err, gc.Schema, gc.Value)
			}
		}
	}
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		k      *Kind
		values []any
		wrong  any
	}{
		{Long, []any{int64(0), int64(math.MinInt64), int64(math.MaxInt64)}, int32(1)},
		{Integer, []any{int32(0), int32(math.MinInt32), int32(-1)}, int64(1)},
		{Short, []any{int16(0), int16(math.MinInt16), int16(7)}, 1},
		{Double, []any{0.0, math.Inf(-1), math.SmallestNonzeroFloat64, -2.5}, float32(1)},
		{Float, []any{float32(0), float32(math.Inf(1)), float32(1e-45)}, 1.0},
		{Boolean, []any{true, false}, int8(1)},
	} {
		t.Run(tc.k.alias, func(t *testing.T) {
			var cases []convtest.Case
			for _, v := range tc.values {
				cases = append(cases, convtest.Case{Name: dump.Value(v), Schema: tc.k.schema, Value: v})
			}
			cases = append(cases, convtest.Case{Name: "nil", Schema: tc.k.schema, Value: nil})
			bad := [][]byte{{}, make([]byte, tc.k.size+1)}
			if tc.k == Boolean {
				bad = append(bad, []byte{2})
			}
			convtest.Run(t, convtest.Suite{
				New:             func() connect.Converter { return New(tc.k) },
				Cases:           cases,
				TombstoneSchema: tc.k.schema,
				WrongTypes:      []convtest.Case{{Name: "wrong", Value: tc.wrong}, {Name: "string", Value: "1"}},
				BadInputs:       bad,
			})
			convtest.RunHeader(t, convtest.HeaderSuite{
				New:        func() connect.HeaderConverter { return NewHeaderConverter(tc.k) },
				Cases:      cases,
				NullSchema: tc.k.schema,
				WrongTypes: []convtest.Case{{Name: "wrong", Value: tc.wrong}},
				BadInputs:  bad,
			})
		})
	}
}

func TestRegistered(t *testing.T) {
	for _, k := range kinds {
		for _, name := range []string{k.class, k.alias} {
			if p, err := plugins.LookupKind(name, plugins.Converter); err != nil || p.New().(*Converter).k != k {
				t.Fatalf("%s: %v", name, err)
			}
			if p, err := plugins.LookupKind(name, plugins.HeaderConverter); err != nil || p.New().(*HeaderConverter).k != k {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}
