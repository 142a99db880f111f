package bytearray

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/convtest"
	"github.com/fjordhq/fjord/converters/internal/dump"
	"github.com/fjordhq/fjord/converters/internal/golden"
)

var goldenValues = map[string]convtest.Case{
	"null": {}, "bytes": {Schema: connect.BytesSchema, Value: []byte{1, 2, 0xff}}, "noschema": {Value: []byte{}},
	"optional_null": {Schema: connect.OptionalBytesSchema}, "wrong_schema": {Schema: connect.StringSchema, Value: []byte{1}},
	"wrong_schema_null": {Schema: connect.Int32Schema}, "wrong_value": {Schema: connect.BytesSchema, Value: "s"},
	"wrong_value_noschema": {Value: int64(5)},
}

func TestGolden(t *testing.T) {
	cases, err := golden.Read("testdata/golden/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	for _, gc := range cases {
		switch gc.Op {
		case "from":
			v := goldenValues[gc.Name]
			if dump.Schema(v.Schema) != gc.Schema || dump.Value(v.Value) != gc.Value {
				t.Fatalf("%s: Go case differs from Kafka's %s %s", gc.Name, gc.Schema, gc.Value)
			}
			out, err := c.FromConnectData("t", nil, v.Schema, v.Value)
			if gc.Error != "" {
				java := gc.Error
				if i := strings.Index(java, "class "); i >= 0 {
					java = java[:i]
				}
				if err == nil || !strings.HasPrefix(err.Error(), java) {
					t.Errorf("%s: got %x, %v; Kafka raised %q", gc.Name, out, err, gc.Error)
				}
				continue
			}
			if err != nil || !bytes.Equal(out, gc.OutputBytes()) || (out == nil) != (gc.Output == nil) {
				t.Errorf("%s: got %x, %v; Kafka wrote %x", gc.Name, out, err, gc.OutputBytes())
			}
		case "to":
			s, v, err := c.ToConnectData("t", nil, gc.InputBytes())
			if err != nil || dump.Schema(s) != gc.Schema || dump.Value(v) != gc.Value {
				t.Errorf("%x: got %s %s %v; Kafka read %s %s", gc.InputBytes(), dump.Schema(s), dump.Value(v), err, gc.Schema, gc.Value)
			}
		}
	}
}

func TestConformance(t *testing.T) {
	var cases []convtest.Case
	for _, c := range convtest.Primitives() {
		if c.Schema.Type == connect.Bytes {
			cases = append(cases, c.WithWant(connect.OptionalBytesSchema, c.Value))
		}
	}
	cases = append(cases, convtest.Case{Name: "no-schema", Value: []byte("x")}.WithWant(connect.OptionalBytesSchema, []byte("x")))
	wrong := []convtest.Case{
		{Name: "string-schema", Schema: connect.StringSchema, Value: []byte("x")},
		{Name: "string-value", Schema: connect.BytesSchema, Value: "x"},
		{Name: "int-no-schema", Value: int64(1)},
	}
	convtest.Run(t, convtest.Suite{
		New:             func() connect.Converter { return New() },
		Cases:           cases,
		TombstoneSchema: connect.OptionalBytesSchema,
		WrongTypes:      wrong,
		AliasesInput:    true,
	})
	convtest.RunHeader(t, convtest.HeaderSuite{
		New:        func() connect.HeaderConverter { return NewHeaderConverter() },
		Cases:      cases,
		NullSchema: connect.OptionalBytesSchema,
		WrongTypes: wrong,
	})
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{Class, "ByteArrayConverter"} {
		if p, err := plugins.LookupKind(name, plugins.Converter); err != nil || p.Class != Class {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := plugins.LookupKind(name, plugins.HeaderConverter); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
