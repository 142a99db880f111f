package avro

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// Avro schemas Confluent's AvroData makes for Connect schemas, written
// as Java's Schema.toString() prints them. Each case cites the test in
// confluentinc/schema-registry avro-data/src/test/java/io/confluent/
// connect/avro/AvroDataTest.java that builds the expected Avro schema
// (with Avro's SchemaBuilder; property order is the order AvroData adds
// them: connect.doc, connect.version, connect.parameters,
// connect.default, connect.name, connect.type, then logicalType).
func TestFromConnectSchemaGolden(t *testing.T) {
	inner := connect.NewStruct().Field("value", connect.Int64Schema).Optional().Build()
	namedInner := connect.NewStruct().Name("inner").Field("value", connect.Int64Schema).Optional().Build()
	cases := []struct {
		name string
		s    *connect.Schema
		want string
	}{
		{"testFromConnectComplex", connect.NewStruct().
			Field("int8", connect.NewSchema(connect.Int8).Default(int8(2)).Doc("int8 field").Build()).
			Field("int16", connect.Int16Schema).
			Field("int32", connect.Int32Schema).
			Field("int64", connect.Int64Schema).
			Field("float32", connect.Float32Schema).
			Field("float64", connect.Float64Schema).
			Field("boolean", connect.BooleanSchema).
			Field("string", connect.StringSchema).
			Field("bytes", connect.BytesSchema).
			Field("array", connect.NewArray(connect.StringSchema).Build()).
			Field("map", connect.NewMap(connect.StringSchema, connect.Int32Schema).Build()).
			Field("mapNonStringKeys", connect.NewMap(connect.Int32Schema, connect.Int32Schema).Build()).
			Build(),
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[` +
				`{"name":"int8","type":{"type":"int","connect.doc":"int8 field","connect.default":2,"connect.type":"int8"},"default":2},` +
				`{"name":"int16","type":{"type":"int","connect.type":"int16"}},{"name":"int32","type":"int"},{"name":"int64","type":"long"},` +
				`{"name":"float32","type":"float"},{"name":"float64","type":"double"},{"name":"boolean","type":"boolean"},` +
				`{"name":"string","type":"string"},{"name":"bytes","type":"bytes"},{"name":"array","type":{"type":"array","items":"string"}},` +
				`{"name":"map","type":{"type":"map","values":"int"}},` +
				`{"name":"mapNonStringKeys","type":{"type":"array","items":{"type":"record","name":"MapEntry","fields":[{"name":"key","type":"int"},{"name":"value","type":"int"}]}}}]}`},
		{"testFromConnectStructsWithNullName", connect.NewStruct().
			Field("struct", inner).Field("array", connect.NewArray(inner).Build()).Build(),
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[` +
				`{"name":"struct","type":["null",{"type":"record","name":"ConnectDefault2","fields":[{"name":"value","type":"long"}]}],"default":null},` +
				`{"name":"array","type":{"type":"array","items":["null","ConnectDefault2"]}}]}`},
		{"testFromConnectOptionalAndNonOptionalStruct", connect.NewStruct().Name("outer").
			Field("struct", namedInner).Field("array", connect.NewArray(namedInner).Build()).Build(),
			`{"type":"record","name":"outer","fields":[` +
				`{"name":"struct","type":["null",{"type":"record","name":"inner","fields":[{"name":"value","type":"long"}],"connect.name":"inner"}],"default":null},` +
				`{"name":"array","type":{"type":"array","items":["null","inner"]}}],"connect.name":"outer"}`},
		{"testFromConnectOptionalWithDefaultNull", connect.NewStruct().Field("optionalBool", connect.OptionalBooleanSchema).Build(),
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"optionalBool","type":["null","boolean"],"default":null}]}`},
		{"testFromConnectOptionalPrimitiveWithMetadata", connect.NewSchema(connect.String).Doc("doc").Default("foo").
			Name("io.confluent.stringtype").Version(2).Optional().Parameter("foo", "bar").Parameter("baz", "baz").Build(),
			`[{"type":"string","connect.doc":"doc","connect.version":2,"connect.parameters":{"foo":"bar","baz":"baz"},"connect.default":"foo","connect.name":"io.confluent.stringtype"},"null"]`},
		{"testFromConnectRecordWithMetadata", connect.NewStruct().Name("io.confluent.test.TestSchema").Version(12).Doc("doc").
			Field("int32", connect.Int32Schema).Build(),
			`{"type":"record","name":"TestSchema","namespace":"io.confluent.test","fields":[{"name":"int32","type":"int"}],"connect.doc":"doc","connect.version":12,"connect.name":"io.confluent.test.TestSchema"}`},
		{"testFromNamedConnectMapWithNonStringKey", connect.NewMap(connect.OptionalStringSchema, connect.Int32Schema).Name("foo.bar").Build(),
			`{"type":"array","items":{"type":"record","name":"bar","namespace":"foo","fields":[{"name":"key","type":["null","string"],"default":null},{"name":"value","type":"int"}],"connect.internal.type":"MapEntry"},"connect.name":"foo.bar"}`},
		{"testFromConnectLogicalDateNew", connect.DateSchema().Build(),
			`{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}`},
		{"testFromConnectLogicalTimeNew", connect.TimeSchema().Build(),
			`{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}`},
		{"testFromConnectLogicalTimestampNew", connect.TimestampSchema().Build(),
			`{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}`},
		{"testFromConnectLogicalDecimalNew (createDecimalSchema)", connect.DecimalSchema(2).Build(),
			`{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`},
		{"testFromConnectLogicalDecimalScaleGreaterThanPrecision", connect.DecimalSchema(7).Parameter(paramPrecision, "5").Build(),
			`{"type":"bytes","scale":7,"precision":5,"connect.version":1,"connect.parameters":{"scale":"7","connect.decimal.precision":"5"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`},
		{"testFromConnectBytesFixed", connect.NewSchema(connect.Bytes).Name("sample").Parameter(paramFixedSize, "4").Build(),
			`{"type":"fixed","name":"sample","size":4,"connect.parameters":{"connect.fixed.size":"4"},"connect.name":"sample"}`},
		{"testFromConnectBoolean", connect.BooleanSchema, `"boolean"`},
		{"optional int with default (maybeMakeOptional)", connect.NewSchema(connect.Int32).Optional().Default(int32(5)).Build(),
			`[{"type":"int","connect.default":5},"null"]`},
		{"union struct (AVRO_TYPE_UNION)", connect.NewStruct().Name(unionName).
			Field("int", connect.OptionalInt32Schema).Field("string", connect.OptionalStringSchema).Build(),
			`["int","string"]`},
	}
	d := avroData{connectMeta: true}
	for _, c := range cases {
		a, err := d.fromConnectSchema(c.s)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := a.String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// toConnectSchema inverts fromConnectSchema (Confluent's round trip in
// AvroDataTest.convertToConnect), and reads schemas other producers
// write as AvroData does.
func TestToConnectSchema(t *testing.T) {
	d := avroData{connectMeta: true}
	for _, s := range []*connect.Schema{
		connect.NewStruct().Name("com.acme.User").Version(3).Doc("user").
			Field("id", connect.Int64Schema).
			Field("small", connect.NewSchema(connect.Int8).Default(int8(2)).Build()).
			Field("tags", connect.NewArray(connect.StringSchema).Optional().Build()).
			Field("attrs", connect.NewMap(connect.StringSchema, connect.OptionalFloat64Schema).Build()).
			Field("counts", connect.NewMap(connect.Int32Schema, connect.Int64Schema).Build()).
			Field("price", connect.DecimalSchema(2).Build()).
			Field("born", connect.DateSchema().Optional().Build()).
			Field("seen", connect.TimestampSchema().Build()).
			Field("at", connect.TimeSchema().Build()).
			Field("nick", connect.NewSchema(connect.String).Optional().Default("none").Build()).
			Field("blob", connect.OptionalBytesSchema).
			Build(),
		connect.NewMap(connect.OptionalStringSchema, connect.Int32Schema).Name("foo.bar").Build(),
		connect.NewStruct().Name(unionName).Field("int", connect.OptionalInt32Schema).Field("string", connect.OptionalStringSchema).Build(),
	} {
		a, err := d.fromConnectSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := d.toConnectSchema(a, nil)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if !back.Equal(s) {
			t.Errorf("round trip of %s\n got %+v\nwant %+v", a, back, s)
		}
	}
}
