package avro

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// A datagen-style user record: the converter's hot path once the schema
// id is cached.
func benchRecord() (*connect.Schema, *connect.Struct) {
	s := connect.NewStruct().Name("ksql.users").
		Field("registertime", connect.Int64Schema).
		Field("userid", connect.StringSchema).
		Field("regionid", connect.StringSchema).
		Field("gender", connect.StringSchema).
		Field("score", connect.OptionalFloat64Schema).
		Field("tags", connect.NewArray(connect.StringSchema).Build()).Build()
	v := connect.NewStructValue(s).MustPut("registertime", int64(1493819497170)).MustPut("userid", "User_1").
		MustPut("regionid", "Region_5").MustPut("gender", "MALE").MustPut("score", 4.5).MustPut("tags", []any{"a", "b"})
	return s, v
}

func BenchmarkFromConnectData(b *testing.B) {
	_, url := registry(b)
	conv := NewConverter()
	if err := conv.Configure(map[string]string{KeyRegistryURL: url}, false); err != nil {
		b.Fatal(err)
	}
	s, v := benchRecord()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conv.FromConnectData("users", nil, s, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToConnectData(b *testing.B) {
	_, url := registry(b)
	conv := NewConverter()
	if err := conv.Configure(map[string]string{KeyRegistryURL: url}, false); err != nil {
		b.Fatal(err)
	}
	s, v := benchRecord()
	msg, err := conv.FromConnectData("users", nil, s, v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := conv.ToConnectData("users", nil, msg); err != nil {
			b.Fatal(err)
		}
	}
}
