package format

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// A typical event record: ids, a few strings, a timestamp, a nested
// struct and an optional field.
var (
	benchAddr = connect.NewStruct().Name("com.example.Address").
			Field("city", connect.StringSchema).Field("zip", connect.OptionalStringSchema).Build()
	benchSchema = connect.NewStruct().Name("com.example.Event").
			Field("id", connect.Int64Schema).
			Field("user", connect.StringSchema).
			Field("kind", connect.StringSchema).
			Field("amount", connect.Float64Schema).
			Field("count", connect.Int32Schema).
			Field("ok", connect.BooleanSchema).
			Field("at", tsSchema).
			Field("note", connect.OptionalStringSchema).
			Field("address", benchAddr).
			Build()
)

func benchRecords(n int) []any {
	out := make([]any, n)
	for i := range out {
		addr := connect.NewStructValue(benchAddr).MustPut("city", "Oslo").MustPut("zip", fmt.Sprintf("%04d", i%10000))
		st := connect.NewStructValue(benchSchema).
			MustPut("id", int64(i)).MustPut("user", fmt.Sprintf("user-%d", i%1000)).MustPut("kind", "purchase").
			MustPut("amount", float64(i)*1.25).MustPut("count", int32(i%100)).MustPut("ok", i%2 == 0).
			MustPut("at", time.UnixMilli(1718000000000+int64(i)).UTC()).MustPut("address", addr)
		if i%3 == 0 {
			st.MustPut("note", "a short note about this event")
		}
		out[i] = st
	}
	return out
}

// countingWriter counts what the format hands to the object.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// benchWrite writes b.N records (a new object every 10000, as the sink
// rotates files) and reports the encoded bytes per second.
func benchWrite(b *testing.B, f Format, s *connect.Schema, records []any) {
	b.ReportAllocs()
	var out countingWriter
	w, err := f.NewWriter(&out)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Write(s, records[i%len(records)]); err != nil {
			b.Fatal(err)
		}
		if (i+1)%10000 == 0 {
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			if w, err = f.NewWriter(&out); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/b.Elapsed().Seconds()/1e6, "MB/s-out")
	b.ReportMetric(float64(out.n)/float64(b.N), "B/record")
}

func BenchmarkJSONWriter(b *testing.B) {
	benchWrite(b, mustNew(b, "JsonFormat", nil), benchSchema, benchRecords(1000))
}

func BenchmarkJSONWriterGzip(b *testing.B) {
	benchWrite(b, mustNew(b, "JsonFormat", map[string]string{CompressionTypeConfig: "gzip"}), benchSchema, benchRecords(1000))
}

// Schemaless maps, as a JsonConverter with schemas.enable=false gives
// them to the sink.
func BenchmarkJSONWriterSchemaless(b *testing.B) {
	records := make([]any, 1000)
	for i := range records {
		records[i] = map[string]any{"id": int64(i), "user": fmt.Sprintf("user-%d", i), "kind": "purchase",
			"amount": float64(i) * 1.25, "ok": true, "address": map[string]any{"city": "Oslo"}}
	}
	benchWrite(b, mustNew(b, "JsonFormat", nil), nil, records)
}

func BenchmarkAvroWriter(b *testing.B) {
	benchWrite(b, mustNew(b, "AvroFormat", nil), benchSchema, benchRecords(1000))
}

func BenchmarkParquetWriter(b *testing.B) {
	benchWrite(b, mustNew(b, "ParquetFormat", nil), benchSchema, benchRecords(1000))
}

func BenchmarkByteArrayWriter(b *testing.B) {
	records := make([]any, 100)
	for i := range records {
		records[i] = []byte(fmt.Sprintf(`{"id":%d,"payload":"some bytes of a record"}`, i))
	}
	benchWrite(b, mustNew(b, "ByteArrayFormat", nil), nil, records)
}

func BenchmarkParquetReader(b *testing.B) {
	f := mustNew(b, "ParquetFormat", nil)
	obj := writeAll(b, f, benchSchema, benchRecords(10000)...)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		r, err := f.NewReader(bytesReaderAt(obj), int64(len(obj)))
		if err != nil {
			b.Fatal(err)
		}
		for n < b.N {
			if _, _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
