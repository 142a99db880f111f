package format

import (
	"bytes"
	"io"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// The readers take objects from a bucket anyone may have written to:
// whatever the bytes, they return records or an error, never panic or
// loop.

func fuzzRead(t *testing.T, f Format, data []byte) {
	r, err := f.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return
	}
	for range 10000 {
		if _, _, err := r.Next(); err != nil {
			return
		}
	}
}

func smallRecords() []any {
	return []any{inner(1, "a"), inner(-2, nil)}
}

func FuzzJSONReader(f *testing.F) {
	jf := mustNew(f, "JsonFormat", nil)
	f.Add(writeAll(f, jf, richSchema, richRecords()[0]))
	f.Add(writeAll(f, mustNew(f, "JsonFormat", map[string]string{CompressionTypeConfig: "gzip"}), innerSchema, smallRecords()...))
	f.Add([]byte("{\"a\":[1,{\"b\":null}]}\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, jf, data) })
}

func FuzzAvroReader(f *testing.F) {
	af := mustNew(f, "AvroFormat", nil)
	f.Add(writeAll(f, af, innerSchema, smallRecords()...))
	f.Add(writeAll(f, mustNew(f, "AvroFormat", map[string]string{AvroCodecConfig: "deflate"}), innerSchema, smallRecords()...))
	f.Add(writeAll(f, mustNew(f, "AvroFormat", map[string]string{AvroCodecConfig: "snappy"}), listsSchema, structsAsAny(listsRecords()[:1])...))
	f.Add(writeAll(f, af, connect.NewMap(connect.StringSchema, connect.NewArray(connect.Int64Schema).Build()).Build(),
		map[string]any{"k": []any{int64(1)}}))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, af, data) })
}

func FuzzParquetReader(f *testing.F) {
	pf := mustNew(f, "ParquetFormat", map[string]string{ParquetCodecConfig: "none"})
	f.Add(writeAll(f, pf, innerSchema, smallRecords()...))
	f.Add(writeAll(f, pf, listsSchema, structsAsAny(listsRecords()[:1])...))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, pf, data) })
}

func FuzzByteArrayReader(f *testing.F) {
	bf := mustNew(f, "ByteArrayFormat", map[string]string{CompressionTypeConfig: "gzip"})
	f.Add(writeAll(f, bf, nil, []byte("a"), []byte("b")))
	f.Add([]byte("plain\nlines\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, bf, data)
		fuzzRead(t, mustNew(t, "ByteArrayFormat", nil), data)
	})
}

// Records that cannot be written leave the writers usable: a rejected
// record writes nothing, and the next ones read back.
func TestWritersSurviveRejectedRecords(t *testing.T) {
	for _, class := range []string{"AvroFormat", "ParquetFormat", "JsonFormat"} {
		f := mustNew(t, class, nil)
		var buf bytes.Buffer
		w, _ := f.NewWriter(&buf)
		if err := w.Write(innerSchema, inner(1, "a")); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(innerSchema, connect.NewStructValue(innerSchema)); err == nil {
			t.Errorf("%s: a struct missing a required field was written", class)
		}
		if err := w.Write(innerSchema, inner(2, nil)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		recs := readAll(t, f, buf.Bytes())
		if len(recs) != 2 {
			t.Errorf("%s: %d records", class, len(recs))
		}
	}
	_ = io.Discard
}
