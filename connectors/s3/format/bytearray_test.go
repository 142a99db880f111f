package format

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestByteArrayWritesRawValues(t *testing.T) {
	f := mustNew(t, "io.confluent.connect.s3.format.bytearray.ByteArrayFormat", nil)
	b := writeAll(t, f, connect.OptionalBytesSchema, []byte("one"), []byte{}, []byte{0, 0xff})
	if want := "one\n\n\x00\xff\n"; string(b) != want {
		t.Errorf("object %q, want %q", b, want)
	}
	recs := readAll(t, f, b)
	want := [][]byte{[]byte("one"), {}, {0, 0xff}}
	if len(recs) != len(want) {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if !bytes.Equal(r.v.([]byte), want[i]) || r.s != connect.OptionalBytesSchema {
			t.Errorf("record %d: %v %q", i, r.s, r.v)
		}
	}
	// Strings are written as UTF-8; schemaless bytes too.
	b = writeAll(t, f, nil, "é", []byte("x"))
	if string(b) != "é\nx\n" {
		t.Errorf("object %q", b)
	}
}

func TestByteArraySeparatorExtensionAndGzip(t *testing.T) {
	props := map[string]string{ByteArraySeparatorConfig: " | ", ByteArrayExtensionConfig: ".txt", CompressionTypeConfig: "gzip"}
	f := mustNew(t, "ByteArrayFormat", props)
	if f.Extension() != ".txt.gz" {
		t.Errorf("extension %q", f.Extension())
	}
	b := writeAll(t, f, nil, []byte("a"), []byte("b c"))
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != "a | b c | " {
		t.Errorf("gunzipped %q", plain)
	}
	recs := readAll(t, f, b)
	if len(recs) != 2 || string(recs[0].v.([]byte)) != "a" || string(recs[1].v.([]byte)) != "b c" {
		t.Errorf("read %v", recs)
	}
	// A value holding the separator comes back split, as documented.
	f2 := mustNew(t, "ByteArrayFormat", nil)
	recs = readAll(t, f2, writeAll(t, f2, nil, []byte("x\ny")))
	if len(recs) != 2 {
		t.Errorf("a value with the separator read as %d records", len(recs))
	}
	// An empty separator: the object is one record.
	f3 := mustNew(t, "ByteArrayFormat", map[string]string{ByteArraySeparatorConfig: ""})
	recs = readAll(t, f3, writeAll(t, f3, nil, []byte("ab"), []byte("cd")))
	if len(recs) != 1 || string(recs[0].v.([]byte)) != "abcd" {
		t.Errorf("empty separator read %v", recs)
	}
}

func TestByteArrayRefusesOtherValues(t *testing.T) {
	f := mustNew(t, "ByteArrayFormat", nil)
	w, _ := f.NewWriter(io.Discard)
	for _, c := range []struct {
		s *connect.Schema
		v any
	}{{nil, nil}, {nil, int64(1)}, {connect.Int32Schema, int32(1)}, {innerSchema, inner(1, nil)}} {
		if err := w.Write(c.s, c.v); err == nil {
			t.Errorf("%v %v written", c.s, c.v)
		}
	}
}
