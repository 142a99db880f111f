package format

import (
	"fmt"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// Every format and codec writes the rich records and reads them back
// equal: Avro and Parquet with their schema (names, INT8/INT16, logical
// types restored), JSON schemaless, ByteArray as bytes.
func TestRoundTripSchemaFormats(t *testing.T) {
	cases := []struct {
		class string
		props map[string]string
	}{
		{"AvroFormat", nil},
		{"AvroFormat", map[string]string{AvroCodecConfig: "deflate"}},
		{"AvroFormat", map[string]string{AvroCodecConfig: "snappy"}},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "none"}},
		{"ParquetFormat", nil},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "gzip"}},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "zstd"}},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "brotli"}},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "lz4_raw"}},
	}
	for _, c := range cases {
		for _, data := range []struct {
			name    string
			schema  *connect.Schema
			records []*connect.Struct
		}{{"rich", richSchema, richRecords()}, {"lists", listsSchema, listsRecords()}} {
			t.Run(fmt.Sprintf("%s/%v/%s", c.class, c.props, data.name), func(t *testing.T) {
				f := mustNew(t, c.class, c.props)
				if _, ok := f.(SchemaFixed); !ok {
					t.Fatalf("%s does not say it holds one schema per file", c.class)
				}
				b := writeAll(t, f, data.schema, structsAsAny(data.records)...)
				got := readAll(t, f, b)
				if len(got) != len(data.records) {
					t.Fatalf("read %d records, wrote %d", len(got), len(data.records))
				}
				for i, r := range got {
					if err := sameValue(data.records[i], r.v); err != nil {
						t.Errorf("record %d: %v", i, err)
					}
					if r.s.Name != data.schema.Name || len(r.s.Fields) != len(data.schema.Fields) {
						t.Errorf("record %d schema %v", i, r.s)
					}
					for _, fld := range data.schema.Fields {
						got := r.s.Field(fld.Name)
						if got == nil || got.Schema.Type != fld.Schema.Type || got.Schema.Optional != fld.Schema.Optional || got.Schema.Name != fld.Schema.Name {
							t.Errorf("field %s read as %+v, written as %+v", fld.Name, got, fld.Schema)
						}
					}
				}
			})
		}
	}
}
