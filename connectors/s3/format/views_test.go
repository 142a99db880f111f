package format

import (
	"io"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func testHeaders() connect.Headers {
	var h connect.Headers
	h.Add("trace", connect.StringSchema, "abc")
	h.Add("n", connect.Int32Schema, int32(42))
	h.Add("trace", connect.BooleanSchema, true)
	h.Add("list", connect.NewArray(connect.StringSchema).Build(), []any{"x", "y"})
	return h
}

// The headers view, as text, written by every format that may hold
// headers and read back as STRING headers.
func TestHeadersViewRoundTrip(t *testing.T) {
	want := connect.Headers{
		{Key: "trace", Schema: connect.StringSchema, Value: "abc"},
		{Key: "n", Schema: connect.StringSchema, Value: "42"},
		{Key: "trace", Schema: connect.StringSchema, Value: "true"},
		{Key: "list", Schema: connect.StringSchema, Value: `["x","y"]`},
	}
	for _, class := range []string{"AvroFormat", "JsonFormat", "ParquetFormat"} {
		t.Run(class, func(t *testing.T) {
			f := mustNew(t, class, nil)
			s, v := HeadersView(testHeaders())
			b := writeAll(t, f, s, v, v)
			if class == "JsonFormat" {
				line := `{"headers":[{"key":"trace","value":"abc"},{"key":"n","value":"42"},{"key":"trace","value":"true"},{"key":"list","value":"[\"x\",\"y\"]"}]}` + "\n"
				if string(b) != line+line {
					t.Errorf("JSON headers file %q", b)
				}
			}
			recs := readAll(t, f, b)
			if len(recs) != 2 {
				t.Fatalf("%d records", len(recs))
			}
			got, err := HeadersFromView(recs[1].v)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("headers %v", got)
			}
			for i := range want {
				if got[i].Key != want[i].Key || got[i].Value != want[i].Value || !got[i].Schema.Equal(want[i].Schema) {
					t.Errorf("header %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// Avro writes the bare array; Parquet the RecordHeaders envelope.
func TestHeadersViewEnvelopes(t *testing.T) {
	s, v := HeadersView(testHeaders())
	avro := mustNew(t, "AvroFormat", nil)
	recs := readAll(t, avro, writeAll(t, avro, s, v))
	if recs[0].s.Type != connect.Array {
		t.Errorf("Avro headers file holds %v", recs[0].s)
	}
	pq := mustNew(t, "ParquetFormat", nil)
	recs = readAll(t, pq, writeAll(t, pq, s, v))
	if recs[0].s.Name != "RecordHeaders" || recs[0].s.Field("headers") == nil {
		t.Errorf("Parquet headers file holds %v", recs[0].s)
	}
	// A null header value cannot be written, as in Confluent.
	var h connect.Headers
	h.Add("k", connect.OptionalStringSchema, nil)
	s, v = HeadersView(h)
	for _, class := range []string{"AvroFormat", "JsonFormat", "ParquetFormat"} {
		w, _ := mustNew(t, class, nil).NewWriter(io.Discard)
		if err := w.Write(s, v); err == nil {
			t.Errorf("%s wrote a null header value", class)
		}
	}
	if _, err := HeadersFromView(int64(1)); err == nil {
		t.Error("a number read as headers")
	}
}

// Parquet keys are enveloped in RecordKey{key} and unwrapped on reading;
// the other formats write keys bare.
func TestKeysFormat(t *testing.T) {
	pq := KeysFormat(mustNew(t, "ParquetFormat", nil))
	if _, ok := pq.(SchemaFixed); !ok {
		t.Error("keys Parquet format is not SchemaFixed")
	}
	b := writeAll(t, pq, connect.StringSchema, "k1", "k2")
	pf := openParquet(t, b)
	if got := schemaElements(pf); got != "RecordKey children=1\nkey REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING\n" {
		t.Errorf("keys schema\n%s", got)
	}
	recs := readAll(t, pq, b)
	if len(recs) != 2 || recs[0].v != "k1" || recs[1].v != "k2" || recs[0].s.Type != connect.String {
		t.Errorf("keys read %v", recs)
	}
	b = writeAll(t, pq, innerSchema, inner(1, "x"))
	recs = readAll(t, pq, b)
	if err := sameValue(inner(1, "x"), recs[0].v); err != nil {
		t.Error(err)
	}
	w, _ := pq.NewWriter(io.Discard)
	if err := w.Write(nil, "schemaless"); err == nil {
		t.Error("a schemaless key was written to Parquet")
	}
	js := mustNew(t, "JsonFormat", nil)
	if KeysFormat(js) != js {
		t.Error("JSON keys are enveloped")
	}
}
