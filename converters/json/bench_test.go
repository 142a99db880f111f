package json

import (
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// benchRecord is the 10-field struct the Speed goal is measured with: a
// typical CDC/datagen row (ids, strings, a timestamp, a decimal,
// optionals, a bool).
func benchRecord() (*connect.Schema, *connect.Struct) {
	s := connect.NewStruct().Name("com.example.Order").
		Field("id", connect.Int64Schema).
		Field("customer_id", connect.Int32Schema).
		Field("name", connect.StringSchema).
		Field("email", connect.OptionalStringSchema).
		Field("amount", connect.Float64Schema).
		Field("price", connect.DecimalSchema(2).Build()).
		Field("created_at", connect.TimestampSchema().Build()).
		Field("active", connect.BooleanSchema).
		Field("quantity", connect.Int16Schema).
		Field("note", connect.OptionalStringSchema).
		Build()
	v := connect.NewStructValue(s).
		MustPut("id", int64(1234567890)).
		MustPut("customer_id", int32(42)).
		MustPut("name", "Ada Lovelace").
		MustPut("email", "ada@example.com").
		MustPut("amount", 1234.5).
		MustPut("price", connect.NewDecimal(99999, 2)).
		MustPut("created_at", time.UnixMilli(1700000000123).UTC()).
		MustPut("active", true).
		MustPut("quantity", int16(3)).
		MustPut("note", nil)
	return s, v
}

func benchConverter(b *testing.B, cfg string) *Converter {
	return configured(b, cfg)
}

func BenchmarkFromConnectData(b *testing.B) {
	for _, cfg := range []string{"", "schemas.enable=false"} {
		name := "envelope"
		if cfg != "" {
			name = "schemaless"
		}
		b.Run(name, func(b *testing.B) {
			c := benchConverter(b, cfg)
			s, v := benchRecord()
			out, _ := c.FromConnectData("t", nil, s, v)
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.FromConnectData("t", nil, s, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkToConnectData(b *testing.B) {
	for _, cfg := range []string{"", "schemas.enable=false"} {
		name := "envelope"
		if cfg != "" {
			name = "schemaless"
		}
		b.Run(name, func(b *testing.B) {
			c := benchConverter(b, cfg)
			s, v := benchRecord()
			data, err := c.FromConnectData("t", nil, s, v)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.ToConnectData("t", nil, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
