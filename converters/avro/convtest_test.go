package avro

import (
	"context"
	"testing"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/convtest"
)

// The AvroConverter through the converter conformance suite, against
// Fjord's registry. Values come back as sent; schemas come back with the
// version the schema has under the subject (as Confluent's converter
// does), so the expected schemas are versioned by registering the
// corpus first, in order; nil values are tombstones; schemaless values
// (Confluent's Anything record) come back schemaless.
func TestConformance(t *testing.T) {
	srv, url := registry(t)
	ctx := context.Background()
	r := srv.Registry()
	// The corpus is unrelated schemas under one subject.
	if _, err := r.SetConfig(ctx, "", "NONE"); err != nil {
		t.Fatal(err)
	}
	d := avroData{connectMeta: true}
	var cases []convtest.Case
	for _, c := range convtest.All() {
		if c.Value == nil {
			cases = append(cases, c.WithWant(nil, nil))
			continue
		}
		a, err := d.fromConnectSchema(c.Schema)
		if err != nil {
			t.Fatal(err)
		}
		var version int
		for _, subject := range []string{"convtest-topic-key", "convtest-topic-value"} {
			if _, err := r.Register(ctx, subject, schemaregistry.RegisterRequest{Schema: a.String()}); err != nil {
				t.Fatal(err)
			}
			si, err := r.Lookup(subject, schemaregistry.RegisterRequest{Schema: a.String()}, false)
			if err != nil {
				t.Fatal(err)
			}
			version = si.Version
		}
		if c.Schema.Version != nil {
			cases = append(cases, c)
			continue
		}
		ws := connect.FromSchema(c.Schema).Version(int32(version)).Build()
		wv := c.Value
		if st, ok := c.Value.(*connect.Struct); ok {
			wv = restruct(ws, st)
		}
		cases = append(cases, c.WithWant(ws, wv))
	}
	for _, c := range convtest.Schemaless() {
		cases = append(cases, c.WithWant(nil, c.Value))
	}
	convtest.Run(t, convtest.Suite{
		New:   func() connect.Converter { return NewConverter() },
		Props: map[string]string{KeyRegistryURL: url},
		Cases: cases,
		WrongTypes: []convtest.Case{
			{Name: "string for int32", Schema: connect.Int32Schema, Value: "x"},
			{Name: "int64 for int8", Schema: connect.Int8Schema, Value: int64(1)},
			{Name: "map for struct", Schema: userSchema, Value: map[string]any{"id": int64(1)}},
			{Name: "nil for required", Schema: connect.StringSchema, Value: nil},
			{Name: "schemaless time", Schema: nil, Value: connect.MillisToTime(1)},
		},
		BadInputs: [][]byte{{1}, {0, 0, 0}, {1, 0, 0, 0, 1, 2}, {0, 0, 0, 0, 99, 2}, {0, 0x7f, 0xff, 0xff, 0xff}},
	})
}

// restruct copies st's values into a struct of schema s (the same shape).
func restruct(s *connect.Schema, st *connect.Struct) *connect.Struct {
	out := connect.NewStructValue(s)
	for i := range s.Fields {
		out.PutFieldUnchecked(&s.Fields[i], st.GetFieldWithoutDefault(&st.Schema().Fields[i]))
	}
	return out
}

func FuzzConvtest(f *testing.F) {
	srv, url := registry(f)
	if _, err := srv.Registry().Register(context.Background(), "convtest-topic-value", schemaregistry.RegisterRequest{Schema: `{"type":"record","name":"R","fields":[{"name":"m","type":{"type":"map","values":["null","long"]}}]}`}); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 0, 1, 2, 2, 0x61, 2, 4, 0})
	convtest.Fuzz(f, func() connect.Converter {
		c := NewConverter()
		if err := c.Configure(map[string]string{KeyRegistryURL: url}, false); err != nil {
			f.Fatal(err)
		}
		return c
	})
}
