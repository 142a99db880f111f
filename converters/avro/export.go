package avro

import (
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Thin exported wrappers over the converter's Connect ↔ Avro conversion
// (Confluent's AvroData), for writers of Avro-shaped files (the S3
// sink's Avro and Parquet formats) that need the same schemas and
// values without the registry wire format.

// SchemaFromConnect is AvroData.fromConnectSchema: the Avro schema the
// converter registers for s (connectMeta is connect.meta.data). A nil
// schema gives Confluent's Anything record.
func SchemaFromConnect(s *connect.Schema, connectMeta bool) (*avsc.Schema, error) {
	d := avroData{connectMeta: connectMeta}
	return d.fromConnectSchema(s)
}

// SchemaToConnect is AvroData.toConnectSchema for a writer schema that
// no registry versions (connect.version, if present, gives the version).
func SchemaToConnect(a *avsc.Schema, connectMeta bool) (*connect.Schema, error) {
	d := avroData{connectMeta: connectMeta}
	return d.toConnectSchema(a, nil)
}

// ValueToNative converts v (of schema s) to goavro's native form for a,
// the schema SchemaFromConnect made for s. Maps come out as arrays of
// {"key","value"} records sorted by key: encode them with a codec built
// from CodecSchema(a, true).
func ValueToNative(s *connect.Schema, a *avsc.Schema, v any) (any, error) {
	return toAvro(s, a, v)
}

// ValueFromNative converts goavro's native value, decoded with a codec
// built from CodecSchema(a, false), to a Connect value of s.
func ValueFromNative(s *connect.Schema, a *avsc.Schema, native any) (any, error) {
	return fromAvro(s, a, native)
}

// CodecSchema is a without properties (logical types stay their base
// types, which ValueToNative and ValueFromNative convert themselves),
// the schema to build goavro codecs from; forWrite turns maps into
// arrays of key/value records (same binary encoding, stable order).
func CodecSchema(a *avsc.Schema, forWrite bool) *avsc.Schema {
	return plain(a, forWrite)
}

// CheckBlocks walks the value of schema a at the start of b (what
// follows it is ignored) and refuses array or map block counts the
// bytes cannot hold, before goavro allocates for them.
func CheckBlocks(a *avsc.Schema, b []byte) error {
	if !hasBlocks(a) {
		return nil
	}
	return checkBlocks(a, b)
}
